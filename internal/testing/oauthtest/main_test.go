package oauthtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/oauth2"

	"github.com/agentmcp/agentmcp/internal/testing/oauthtest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// redirectURI is the client's callback in these tests. Nothing listens
// there: tests read the redirect instead of following it.
const redirectURI = "http://127.0.0.1:9/callback"

// resourceURL is the resource (RFC 8707) the tests ask tokens for.
const resourceURL = "https://mcp.example.com/mcp"

// testCtx is a context bounded as a safety net.
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// register posts client metadata to the registration endpoint.
func register(t testing.TB, as *oauthtest.AuthServer, meta map[string]any) (int, map[string]any) {
	t.Helper()
	b, err := json.Marshal(meta)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(as.RegistrationEndpoint(), "application/json", strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("registration response: %v", err)
	}
	return resp.StatusCode, body
}

// registerClient registers a client with auth method method (and the
// refresh_token grant) and returns an oauth2 config for it.
func registerClient(t testing.TB, as *oauthtest.AuthServer, method string, scopes ...string) *oauth2.Config {
	t.Helper()
	status, body := register(t, as, map[string]any{
		"redirect_uris":              []string{redirectURI},
		"token_endpoint_auth_method": method,
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"application_type":           "native",
		"client_name":                "oauthtest test",
	})
	if status != http.StatusCreated {
		t.Fatalf("register: %d %v", status, body)
	}
	cfg := &oauth2.Config{
		ClientID:    body["client_id"].(string),
		RedirectURL: redirectURI,
		Scopes:      scopes,
		Endpoint: oauth2.Endpoint{
			AuthURL:   as.AuthorizationEndpoint(),
			TokenURL:  as.TokenEndpoint(),
			AuthStyle: oauth2.AuthStyleInParams,
		},
	}
	if method == "client_secret_basic" {
		cfg.Endpoint.AuthStyle = oauth2.AuthStyleInHeader
	}
	if s, ok := body["client_secret"].(string); ok {
		cfg.ClientSecret = s
	}
	return cfg
}

// authorization is one run of the authorization endpoint.
type authorization struct {
	verifier, state string
	redirect        *url.URL // where the server sent the browser
}

func (a *authorization) code() string { return a.redirect.Query().Get("code") }

// authorize visits the authorization URL for cfg and resourceURL, as the
// user's browser, and returns the redirect.
func authorize(t testing.TB, as *oauthtest.AuthServer, cfg *oauth2.Config, opts ...oauth2.AuthCodeOption) *authorization {
	t.Helper()
	a := &authorization{verifier: oauth2.GenerateVerifier(), state: "state-" + oauth2.GenerateVerifier()[:8]}
	opts = append([]oauth2.AuthCodeOption{oauth2.S256ChallengeOption(a.verifier), oauth2.SetAuthURLParam("resource", resourceURL)}, opts...)
	loc, err := as.VisitAuthURL(testCtx(t), cfg.AuthCodeURL(a.state, opts...))
	if err != nil {
		t.Fatal(err)
	}
	a.redirect = loc
	return a
}

// exchange redeems the authorization's code with its verifier.
func exchange(t testing.TB, cfg *oauth2.Config, a *authorization, opts ...oauth2.AuthCodeOption) (*oauth2.Token, error) {
	t.Helper()
	opts = append([]oauth2.AuthCodeOption{oauth2.VerifierOption(a.verifier), oauth2.SetAuthURLParam("resource", resourceURL)}, opts...)
	return cfg.Exchange(testCtx(t), a.code(), opts...)
}

// login runs the whole flow and returns the tokens.
func login(t testing.TB, as *oauthtest.AuthServer, cfg *oauth2.Config) *oauth2.Token {
	t.Helper()
	a := authorize(t, as, cfg)
	if a.code() == "" {
		t.Fatalf("authorization redirect %s has no code", a.redirect)
	}
	tok, err := exchange(t, cfg, a)
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	return tok
}

// refresh exchanges a refresh token through x/oauth2.
func refresh(t testing.TB, cfg *oauth2.Config, rt string) (*oauth2.Token, error) {
	t.Helper()
	// No connection reuse: net/http retries a request transparently when a
	// reused connection turns out to be closed, which would make the
	// fault counts depend on timing.
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	ctx := context.WithValue(testCtx(t), oauth2.HTTPClient, client)
	return cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: rt}).Token()
}

// oauthError returns the OAuth error code of a failed token request.
func oauthError(err error) string {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		return re.ErrorCode
	}
	if err == nil {
		return ""
	}
	return "not a RetrieveError: " + err.Error()
}

// postToken posts a form to the token endpoint, with Basic credentials when
// user is set, and returns the status and the decoded body.
func postToken(t testing.TB, as *oauthtest.AuthServer, form url.Values, user, pass string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequestWithContext(testCtx(t), http.MethodPost, as.TokenEndpoint(), strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if user != "" {
		req.SetBasicAuth(url.QueryEscape(user), url.QueryEscape(pass))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var body map[string]any
	if err := json.Unmarshal(b, &body); err != nil {
		t.Fatalf("token response %d %q: %v", resp.StatusCode, b, err)
	}
	return resp.StatusCode, body
}
