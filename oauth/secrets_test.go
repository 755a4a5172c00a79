package oauth_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/internal/testing/oauthtest"
	"github.com/agentmcp/agentmcp/oauth"
)

// craftedAS is an authorization server whose registration and token
// endpoints answer what the test says, for answers that oauthtest, being a
// correct server, never gives. It serves RFC 8414 metadata, and no
// authorization endpoint: tests make up the callbacks.
type craftedAS struct {
	URL string

	// mu guards the fields below.
	mu       sync.Mutex
	register func() (status int, body string)
	token    func(req url.Values) (status int, body string) // req: the form, and the Basic password as client_secret
}

func newCraftedAS(t testing.TB) *craftedAS {
	a := &craftedAS{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"issuer":                           a.URL,
			"authorization_endpoint":           a.URL + "/authorize",
			"token_endpoint":                   a.URL + "/token",
			"registration_endpoint":            a.URL + "/register",
			"response_types_supported":         []string{"code"},
			"code_challenge_methods_supported": []string{"S256"},
		})
	})
	answer := func(w http.ResponseWriter, status int, body string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write([]byte(body))
	}
	mux.HandleFunc("POST /register", func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		f := a.register
		a.mu.Unlock()
		status, body := f()
		answer(w, status, body)
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		req := r.PostForm
		if _, pass, ok := r.BasicAuth(); ok {
			secret, _ := url.QueryUnescape(pass)
			req.Set("client_secret", secret)
		}
		a.mu.Lock()
		f := a.token
		a.mu.Unlock()
		status, body := f(req)
		answer(w, status, body)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	a.URL = srv.URL
	return a
}

func (a *craftedAS) answer(register func() (int, string), token func(url.Values) (int, string)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.register, a.token = register, token
}

// TestRegistrationErrorsHideSecrets: whatever the registration endpoint
// answers, the error reports its status and OAuth error, never the body,
// which may hold the client secret (the error ends up in the server's
// state, shown in UIs and logs).
func TestRegistrationErrorsHideSecrets(t *testing.T) {
	t.Parallel()
	const secret = "TOP-SECRET"
	tests := []struct {
		name   string
		status int
		body   string
		want   string // in the error; "" for success
	}{
		{"fractional timestamp", 201, `{"client_id":"c1","client_secret":"TOP-SECRET","client_id_issued_at":1712345678.5,"client_secret_expires_at":0,"token_endpoint_auth_method":"client_secret_basic"}`, ""},
		{"cut short", 201, `{"client_id":"c1","client_secret":"TOP-SECRET"`, "HTTP 201"},
		{"not an object", 200, `["TOP-SECRET"]`, "HTTP 200"},
		{"expiry not a number", 201, `{"client_id":"c1","client_secret":"TOP-SECRET","client_secret_expires_at":"TOP-SECRET"}`, "HTTP 201"},
		{"no client_id", 201, `{"client_secret":"TOP-SECRET"}`, "client_id"},
		{"400 OAuth error", 400, `{"error":"invalid_redirect_uri","error_description":"redirect URI refused","client_secret":"TOP-SECRET"}`, "HTTP 400: invalid_redirect_uri: redirect URI refused"},
		{"400 with the secret in its description", 400, `{"error":"invalid_client_metadata","error_description":"TOP-SECRET is taken","client_secret":"TOP-SECRET"}`, "invalid_client_metadata"},
		{"400 not JSON", 400, `client_secret=TOP-SECRET`, "HTTP 400"},
		{"401 OAuth error", 401, `{"error":"invalid_token","error_description":"an initial access token is required","client_secret":"TOP-SECRET"}`, "HTTP 401: invalid_token: an initial access token is required"},
		{"500 JSON", 500, `{"client_secret":"TOP-SECRET"}`, "HTTP 500"},
		{"500 text", 500, `TOP-SECRET`, "HTTP 500"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			as := newCraftedAS(t)
			as.answer(func() (int, string) { return tt.status, tt.body }, nil)
			st := &oauth.MemoryStorage{}
			p := newProvider(t, as.URL, st, nil)
			u, err := p.Authorize(testCtx(t), unauthorized())
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Authorize: %v", err)
				}
				if got := mustParse(t, u).Query().Get("client_id"); got != "c1" {
					t.Errorf("client_id %q; want c1", got)
				}
				return
			}
			if err == nil {
				t.Fatalf("Authorize = %q; want an error", u)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("the error shows the client secret: %v", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q; want it to say %q", err, tt.want)
			}
			if keys := st.Keys(keyClient); len(keys) != 0 {
				t.Errorf("registration stored after a failure: %v", keys)
			}
		})
	}
}

// TestTokenErrorsHideSecrets: token endpoint errors that echo the request
// or the tokens (in error, error_description or token_type) are reported
// without the code, verifier, client secret, refresh token or access
// token.
func TestTokenErrorsHideSecrets(t *testing.T) {
	t.Parallel()
	const (
		clientSecret = "CLIENT-SECRET-1"
		code         = "CODE-SECRET-1"
		accessToken  = "AT-SECRET-1"
		refreshToken = "RT-SECRET-1"
	)
	echo := func(req url.Values) string {
		var parts []string
		for k, vs := range req {
			parts = append(parts, k+"="+strings.Join(vs, ","))
		}
		return strings.Join(parts, " ")
	}
	jsonString := func(s string) string {
		b, _ := json.Marshal(s)
		return string(b)
	}
	tests := []struct {
		name    string
		refresh bool // the refresh fails, else the exchange
		answer  func(req url.Values) (int, string)
		want    string
	}{
		{"error_description echoes the request", false, func(req url.Values) (int, string) {
			return 400, `{"error":"invalid_request","error_description":` + jsonString("bad request: "+echo(req)) + `}`
		}, "invalid_request: bad request"},
		{"error echoes the request", false, func(req url.Values) (int, string) {
			return 400, `{"error":` + jsonString(echo(req)) + `}`
		}, "token endpoint"},
		{"5xx echoes the request", false, func(req url.Values) (int, string) {
			return 503, `{"error":"temporarily_unavailable","error_description":` + jsonString(echo(req)) + `}`
		}, "temporarily_unavailable"},
		{"token_type echoes the tokens", false, func(url.Values) (int, string) {
			return 200, `{"access_token":"` + accessToken + `","refresh_token":"` + refreshToken + `","token_type":"MAC ` + accessToken + ` ` + refreshToken + `"}`
		}, "unsupported token type"},
		{"refresh: 5xx echoes the request", true, func(req url.Values) (int, string) {
			return 503, `{"error":"temporarily_unavailable","error_description":` + jsonString(echo(req)) + `}`
		}, "temporarily_unavailable"},
		{"refresh: token_type echoes the tokens", true, func(url.Values) (int, string) {
			return 200, `{"access_token":"AT-SECRET-2","refresh_token":"RT-SECRET-2","token_type":"MAC AT-SECRET-2 RT-SECRET-2"}`
		}, "unsupported token type"},
	}
	for _, method := range []string{"client_secret_basic", "client_secret_post"} {
		for _, tt := range tests {
			t.Run(method+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				ctx := testCtx(t)
				clock := oauthtest.NewClock(time.Time{})
				as := newCraftedAS(t)
				var (
					mu      sync.Mutex
					secrets = []string{clientSecret, code, accessToken, refreshToken, "AT-SECRET-2", "RT-SECRET-2"}
				)
				record := func(req url.Values) {
					mu.Lock()
					defer mu.Unlock()
					for _, k := range []string{"code_verifier", "client_assertion"} {
						if v := req.Get(k); v != "" {
							secrets = append(secrets, v)
						}
					}
				}
				ok := func(req url.Values) (int, string) {
					record(req)
					return 200, `{"access_token":"` + accessToken + `","refresh_token":"` + refreshToken + `","token_type":"Bearer","expires_in":60}`
				}
				failing := func(req url.Values) (int, string) {
					record(req)
					return tt.answer(req)
				}
				register := func() (int, string) {
					return 201, `{"client_id":"c1","client_secret":"` + clientSecret + `","client_secret_expires_at":0,"token_endpoint_auth_method":"` + method + `"}`
				}
				if tt.refresh {
					as.answer(register, ok)
				} else {
					as.answer(register, failing)
				}
				p := newProvider(t, as.URL, &oauth.MemoryStorage{}, func(c *oauth.Config) {
					c.Now, c.RefreshAttempts = clock.Now, 1
				})
				u, err := p.Authorize(ctx, unauthorized())
				if err != nil {
					t.Fatal(err)
				}
				callback := url.Values{"state": {mustParse(t, u).Query().Get("state")}, "code": {code}}
				err = p.Exchange(ctx, callback)
				if tt.refresh {
					if err != nil {
						t.Fatalf("Exchange: %v", err)
					}
					clock.Advance(time.Minute)
					as.answer(register, failing)
					_, err = p.Token(ctx)
				}
				if err == nil {
					t.Fatal("no error")
				}
				mu.Lock()
				defer mu.Unlock()
				for _, s := range secrets {
					if strings.Contains(err.Error(), s) {
						t.Errorf("the error shows the secret %q: %v", s, err)
					}
				}
				if !strings.Contains(err.Error(), tt.want) {
					t.Errorf("error %q; want it to say %q", err, tt.want)
				}
			})
		}
	}
}
