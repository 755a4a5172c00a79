package oauthtest_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/agentmcp/agentmcp/internal/testing/oauthtest"
)

// authQuery returns valid authorization parameters for cfg.
func authQuery(cfg *oauth2.Config) url.Values {
	return url.Values{
		"response_type":         {"code"},
		"client_id":             {cfg.ClientID},
		"redirect_uri":          {redirectURI},
		"code_challenge":        {oauth2.S256ChallengeFromVerifier(oauth2.GenerateVerifier())},
		"code_challenge_method": {"S256"},
		"state":                 {"xyz"},
		"resource":              {resourceURL},
		"scope":                 {"mcp:read"},
	}
}

func TestAuthorizeErrorPage(t *testing.T) {
	t.Parallel()
	as := oauthtest.NewServer(t, &oauthtest.Options{Scopes: []string{"mcp:read"}})
	cfg := registerClient(t, as, "none")
	tests := []struct {
		name   string
		change func(q url.Values)
	}{
		{"no client_id", func(q url.Values) { q.Del("client_id") }},
		{"unknown client", func(q url.Values) { q.Set("client_id", "nobody") }},
		{"no redirect_uri", func(q url.Values) { q.Del("redirect_uri") }},
		{"unregistered redirect_uri", func(q url.Values) { q.Set("redirect_uri", "http://127.0.0.1:9/elsewhere") }},
		{"redirect_uri with a different port", func(q url.Values) { q.Set("redirect_uri", "http://127.0.0.1:10/callback") }},
		{"redirect_uri with a trailing slash", func(q url.Values) { q.Set("redirect_uri", redirectURI+"/") }},
		{"repeated parameter", func(q url.Values) { q.Add("state", "again") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := authQuery(cfg)
			tt.change(q)
			loc, err := as.VisitAuthURL(testCtx(t), as.AuthorizationEndpoint()+"?"+q.Encode())
			if err == nil || !strings.Contains(err.Error(), "400") {
				t.Errorf("VisitAuthURL = %v, %v; want an error page", loc, err)
			}
		})
	}
	for _, ar := range as.AuthorizationRequests() {
		if ar.Redirected || ar.Error != "invalid_request" {
			t.Errorf("recorded %+v, want an invalid_request without redirect", ar)
		}
	}
}

func TestAuthorizeErrorRedirect(t *testing.T) {
	t.Parallel()
	as := oauthtest.NewServer(t, &oauthtest.Options{Scopes: []string{"mcp:read"}, Resources: []string{resourceURL}})
	cfg := registerClient(t, as, "none")
	tests := []struct {
		name   string
		change func(q url.Values)
		want   string
	}{
		{"implicit", func(q url.Values) { q.Set("response_type", "token") }, "unsupported_response_type"},
		{"no response_type", func(q url.Values) { q.Del("response_type") }, "unsupported_response_type"},
		{"no pkce", func(q url.Values) { q.Del("code_challenge"); q.Del("code_challenge_method") }, "invalid_request"},
		{"plain pkce", func(q url.Values) { q.Set("code_challenge_method", "plain") }, "invalid_request"},
		{"no challenge method", func(q url.Values) { q.Del("code_challenge_method") }, "invalid_request"},
		{"malformed challenge", func(q url.Values) { q.Set("code_challenge", strings.Repeat("a~", 30)) }, "invalid_request"},
		{"no state", func(q url.Values) { q.Del("state") }, "invalid_request"},
		{"no resource", func(q url.Values) { q.Del("resource") }, "invalid_target"},
		{"relative resource", func(q url.Values) { q.Set("resource", "/mcp") }, "invalid_target"},
		{"resource with fragment", func(q url.Values) { q.Set("resource", resourceURL+"#x") }, "invalid_target"},
		{"unknown resource", func(q url.Values) { q.Set("resource", "https://other.example.com/mcp") }, "invalid_target"},
		{"unknown scope", func(q url.Values) { q.Set("scope", "mcp:read admin") }, "invalid_scope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := authQuery(cfg)
			tt.change(q)
			loc, err := as.VisitAuthURL(testCtx(t), as.AuthorizationEndpoint()+"?"+q.Encode())
			if err != nil {
				t.Fatal(err)
			}
			got := loc.Query()
			if got.Get("error") != tt.want || got.Has("code") || got.Get("state") != q.Get("state") {
				t.Errorf("redirect %s, want error=%s with the state", loc, tt.want)
			}
		})
	}
}

// TestDeny: a denial carries its description exactly as set, XSS payload
// included, for the client to escape.
func TestDeny(t *testing.T) {
	t.Parallel()
	as := oauthtest.NewServer(t, &oauthtest.Options{Iss: oauthtest.IssOn})
	cfg := registerClient(t, as, "none")
	const payload = `<script>alert("pwned")</script><img src=x onerror=alert(1)>`
	as.Deny(payload)
	a := authorize(t, as, cfg)
	q := a.redirect.Query()
	if q.Get("error") != "access_denied" || q.Get("error_description") != payload || q.Get("state") != a.state || q.Get("iss") != as.Issuer() || q.Has("code") {
		t.Errorf("denied redirect query = %v", q)
	}
	as.Allow()
	if a := authorize(t, as, cfg); a.code() == "" {
		t.Errorf("after Allow: %s", a.redirect)
	}
}

func TestOnAuthorize(t *testing.T) {
	t.Parallel()
	var seen []oauthtest.AuthorizationRequest
	as := oauthtest.NewServer(t, &oauthtest.Options{OnAuthorize: func(ar oauthtest.AuthorizationRequest) error {
		seen = append(seen, ar) // requests here are sequential
		switch ar.State {
		case "deny-scope":
			return &oauthtest.Error{Code: "invalid_scope", Description: "not for you"}
		case "deny":
			return errors.New("the user said no")
		}
		return nil
	}})
	cfg := registerClient(t, as, "none", "files:read", "files:write")
	for state, want := range map[string]string{"ok": "", "deny-scope": "invalid_scope", "deny": "access_denied"} {
		q := authQuery(cfg)
		q.Set("state", state)
		q.Set("scope", "files:read files:write")
		loc, err := as.VisitAuthURL(testCtx(t), as.AuthorizationEndpoint()+"?"+q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		if got := loc.Query().Get("error"); got != want {
			t.Errorf("state %s: error %q, want %q", state, got, want)
		}
		if state == "deny" && loc.Query().Get("error_description") != "the user said no" {
			t.Errorf("error_description %q", loc.Query().Get("error_description"))
		}
	}
	if len(seen) != 3 || seen[0].Resource != resourceURL || strings.Join(seen[0].Scopes, " ") != "files:read files:write" {
		t.Errorf("OnAuthorize saw %+v", seen)
	}
}

func TestIss(t *testing.T) {
	t.Parallel()
	tests := []struct {
		mode       oauthtest.IssMode
		wrong      string
		advertised bool
		wantIss    string // "issuer" for the real one
	}{
		{oauthtest.IssOff, "", false, ""},
		{oauthtest.IssOn, "", true, "issuer"},
		{oauthtest.IssUnadvertised, "", false, "issuer"},
		{oauthtest.IssAdvertisedOnly, "", true, ""},
		{oauthtest.IssOn, "https://evil.example.com", true, "https://evil.example.com"},
	}
	for _, tt := range tests {
		t.Run("", func(t *testing.T) {
			t.Parallel()
			as := oauthtest.NewServer(t, &oauthtest.Options{Iss: tt.mode, WrongIss: tt.wrong, IssuerPath: "/tenant1"})
			_, m := getJSON(t, as.MetadataURL())
			if got := m["authorization_response_iss_parameter_supported"] == true; got != tt.advertised {
				t.Errorf("mode %d: advertised = %v", tt.mode, got)
			}
			want := tt.wantIss
			if want == "issuer" {
				want = as.URL + "/tenant1"
			}
			cfg := registerClient(t, as, "none")
			if got := authorize(t, as, cfg).redirect.Query()["iss"]; strings.Join(got, ",") != want {
				t.Errorf("mode %d: iss %q, want %q", tt.mode, got, want)
			}
		})
	}
}

func TestRedirectKeepsQuery(t *testing.T) {
	t.Parallel()
	as := oauthtest.NewServer(t, nil)
	c := as.AddClient(oauthtest.Client{RedirectURIs: []string{"https://app.example.com/cb?tenant=a"}})
	cfg := &oauth2.Config{ClientID: c.ID, RedirectURL: "https://app.example.com/cb?tenant=a",
		Endpoint: oauth2.Endpoint{AuthURL: as.AuthorizationEndpoint(), TokenURL: as.TokenEndpoint(), AuthStyle: oauth2.AuthStyleInParams}}
	a := authorize(t, as, cfg)
	if a.redirect.Query().Get("tenant") != "a" || a.code() == "" {
		t.Errorf("redirect %s lost the redirect URI's query", a.redirect)
	}
	if _, err := exchange(t, cfg, a); err != nil {
		t.Error(err)
	}
}

// TestClientMetadataDocument: a client ID that is an https URL is fetched,
// checked and then usable at the token endpoint.
func TestClientMetadataDocument(t *testing.T) {
	t.Parallel()
	docs := map[string]string{}
	cimd := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		doc, ok := docs[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(doc))
	}))
	t.Cleanup(cimd.Close)
	good, liar := cimd.URL+"/client.json", cimd.URL+"/liar.json"
	docs["/client.json"] = `{"client_id":"` + good + `","client_name":"agentmcp","redirect_uris":["` + redirectURI + `"],"token_endpoint_auth_method":"none","grant_types":["authorization_code","refresh_token"]}`
	docs["/liar.json"] = `{"client_id":"https://other.example.com/client.json","redirect_uris":["` + redirectURI + `"]}`

	as := oauthtest.NewServer(t, &oauthtest.Options{ClientMetadataDocuments: true, CIMDClient: cimd.Client()})
	cfg := &oauth2.Config{ClientID: good, RedirectURL: redirectURI,
		Endpoint: oauth2.Endpoint{AuthURL: as.AuthorizationEndpoint(), TokenURL: as.TokenEndpoint(), AuthStyle: oauth2.AuthStyleInParams}}
	tok := login(t, as, cfg)
	if _, err := refresh(t, cfg, tok.RefreshToken); err != nil {
		t.Errorf("refresh: %v", err)
	}
	if c, ok := as.Client(good); !ok || !c.MetadataDocument || c.Name != "agentmcp" {
		t.Errorf("Client(%s) = %+v, %v", good, c, ok)
	}
	for _, id := range []string{liar, cimd.URL + "/missing.json"} {
		c := *cfg
		c.ClientID = id
		if _, err := as.VisitAuthURL(testCtx(t), c.AuthCodeURL("s", oauth2.S256ChallengeOption(oauth2.GenerateVerifier()), oauth2.SetAuthURLParam("resource", resourceURL))); err == nil {
			t.Errorf("client %s was accepted", id)
		}
	}
	if n := as.Counts.MetadataDocuments.Load(); n != 3 {
		t.Errorf("Counts.MetadataDocuments = %d, want 3", n)
	}

	// Without the option, a URL is just an unknown client ID.
	plain := oauthtest.NewServer(t, &oauthtest.Options{CIMDClient: cimd.Client()})
	c := *cfg
	c.Endpoint.AuthURL = plain.AuthorizationEndpoint()
	if _, err := plain.VisitAuthURL(testCtx(t), c.AuthCodeURL("s", oauth2.S256ChallengeOption(oauth2.GenerateVerifier()), oauth2.SetAuthURLParam("resource", resourceURL))); err == nil {
		t.Error("a metadata document client was accepted without ClientMetadataDocuments")
	}
}
