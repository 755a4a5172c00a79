package server

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/api/client"
	"github.com/agentmcp/agentmcp/server/internal/guard"
	"github.com/agentmcp/agentmcp/store"
	"github.com/agentmcp/agentmcp/store/sqlite"
)

func TestToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t, &Options{Token: "s3cret-token"})
	port := e.ts.URL[strings.LastIndex(e.ts.URL, ":")+1:]
	cookie := "agentmcp_token_" + port
	e.create("test", "a", "Authorization: Bearer s3cret-token")
	tests := []struct {
		name   string
		path   string
		hdr    []string
		status int
	}{
		{"no token", agentPath + "/servers", nil, 401},
		{"wrong bearer", agentPath + "/servers", []string{"Authorization: Bearer nope"}, 401},
		{"basic auth", agentPath + "/servers", []string{"Authorization: Basic czNjcmV0LXRva2Vu"}, 401},
		{"bearer", agentPath + "/servers", []string{"Authorization: Bearer s3cret-token"}, 200},
		{"cookie", agentPath + "/servers", []string{"Cookie: " + cookie + "=s3cret-token"}, 200},
		{"cookie of another port", agentPath + "/servers", []string{"Cookie: agentmcp_token_1=s3cret-token"}, 401},
		{"wrong cookie", agentPath + "/servers", []string{"Cookie: " + cookie + "=nope"}, 401},
		{"agents list", "/agents", nil, 401},
		{"stream", agentPath + "/events", nil, 401},
		{"websocket", agentPath, []string{"Connection: Upgrade", "Upgrade: websocket"}, 401},
		{"dashboard page needs none", "/", nil, 200},
		{"assets need none", "/static/agent.js", nil, 200},
		// The authorization server's redirect carries no token: the
		// agent's single-use state protects the callback. (test/a is open:
		// it was created above; the callback opens none, see
		// TestCallbackOpensNoAgent.)
		{"OAuth callback needs none", agentPath + "/callback?state=x&code=y", nil, 400},
		// With a token, any Host is served (the token defeats DNS rebinding).
		{"other host with token", agentPath + "/servers", []string{"Host: agents.example.com", "Authorization: Bearer s3cret-token"}, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, h, b := e.do("GET", tt.path, "", tt.hdr...)
			if status != tt.status {
				t.Fatalf("status %d, want %d: %s", status, tt.status, b)
			}
			if status == 401 {
				if apiError(t, b).Code != api.CodeUnauthorized || h.Get("WWW-Authenticate") == "" {
					t.Errorf("401 body %s, WWW-Authenticate %q", b, h.Get("WWW-Authenticate"))
				}
			}
		})
	}

	// /?token= sets the cookie and sends the browser on without the token.
	req, _ := http.NewRequest("GET", e.ts.URL+"/?token=s3cret-token&agent=test/a", nil)
	res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/?agent=test%2Fa" {
		t.Errorf("token link: %d Location %q", res.StatusCode, res.Header.Get("Location"))
	}
	c := res.Cookies()
	if len(c) != 1 || c[0].Name != cookie || c[0].Value != "s3cret-token" || !c[0].HttpOnly || c[0].SameSite != http.SameSiteStrictMode {
		t.Errorf("cookie: %+v", c)
	}
	// A wrong token sets nothing.
	req, _ = http.NewRequest("GET", e.ts.URL+"/?token=nope", nil)
	res, err = (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if len(res.Cookies()) != 0 {
		t.Errorf("a wrong token set a cookie")
	}
}

func TestBrowserChecks(t *testing.T) {
	t.Parallel()
	e := newEnv(t, &Options{TrustedOrigins: []string{"http://localhost:5173"}})
	e.create("test", "a")
	self := e.ts.URL
	tests := []struct {
		name   string
		method string
		path   string
		body   string
		hdr    []string
		status int
		code   string
	}{
		{"rebinding host", "GET", agentPath + "/servers", "", []string{"Host: attacker.example:80"}, 403, api.CodeHostNotAllowed},
		{"rebinding host, dashboard too", "GET", "/", "", []string{"Host: attacker.example"}, 403, api.CodeHostNotAllowed},
		{"localhost", "GET", agentPath + "/servers", "", []string{"Host: localhost:8787"}, 200, ""},
		{"ipv6 loopback", "GET", agentPath + "/servers", "", []string{"Host: [::1]:8787"}, 200, ""},
		{"cross-site POST", "POST", agentPath + "/servers", `{"name":"x","url":"http://127.0.0.1:1/"}`, []string{"Sec-Fetch-Site: cross-site", "Origin: https://evil.example"}, 403, api.CodeCrossOrigin},
		{"cross-site POST, old browser", "POST", agentPath + "/servers", `{"name":"x","url":"http://127.0.0.1:1/"}`, []string{"Origin: https://evil.example"}, 403, api.CodeCrossOrigin},
		{"same-site other port", "DELETE", agentPath + "/servers/x", "", []string{"Sec-Fetch-Site: same-site", "Origin: http://127.0.0.1:9999"}, 403, api.CodeCrossOrigin},
		{"cross-site GET", "GET", agentPath + "/servers", "", []string{"Sec-Fetch-Site: cross-site"}, 403, api.CodeCrossOrigin},
		{"same-origin POST", "POST", agentPath + "/servers", `{"name":""}`, []string{"Sec-Fetch-Site: same-origin", "Origin: " + self}, 400, api.CodeInvalidRequest},
		{"trusted origin", "POST", agentPath + "/servers", `{"name":""}`, []string{"Sec-Fetch-Site: same-site", "Origin: http://localhost:5173"}, 400, api.CodeInvalidRequest},
		{"cross-site link to the dashboard", "GET", "/", "", []string{"Sec-Fetch-Site: cross-site"}, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, h, b := e.do(tt.method, tt.path, tt.body, tt.hdr...)
			if status != tt.status {
				t.Fatalf("status %d, want %d: %s", status, tt.status, b)
			}
			if tt.code != "" && apiError(t, b).Code != tt.code {
				t.Errorf("code %s, want %s", b, tt.code)
			}
			if h.Get("Content-Security-Policy") != guard.CSP || h.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("security headers: %v", h)
			}
		})
	}
	if ids := e.stored("test/a"); len(ids) != 0 {
		t.Errorf("stored: %v", ids)
	}

	// CORS for the trusted origin only.
	status, h, _ := e.do("OPTIONS", agentPath+"/servers", "", "Origin: http://localhost:5173", "Access-Control-Request-Method: POST")
	if status != 204 || h.Get("Access-Control-Allow-Origin") != "http://localhost:5173" || h.Get("Access-Control-Allow-Credentials") != "true" {
		t.Errorf("preflight: %d %v", status, h)
	}
	_, h, _ = e.do("GET", agentPath+"/servers", "", "Origin: https://evil.example")
	if h.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("CORS for an untrusted origin: %v", h)
	}

	// A WebSocket from another origin is refused; from the trusted one it
	// is accepted.
	ctx := testCtx(t)
	wsURL := client.AgentURL(e.ts.URL, "test", "a")
	_, res, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {"https://evil.example"}}})
	if err == nil || res == nil || res.StatusCode != http.StatusForbidden {
		t.Errorf("foreign WebSocket: %v %v", res, err)
	}
	c, _, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {"http://localhost:5173"}}})
	if err != nil {
		t.Fatalf("trusted WebSocket: %v", err)
	}
	c.Close(websocket.StatusNormalClosure, "")

	// Assets.
	status, h, b := e.do("GET", "/static/agent.js", "")
	if status != 200 || !strings.Contains(h.Get("Content-Type"), "javascript") || !strings.Contains(string(b), "export function connectAgent") {
		t.Errorf("agent.js: %d %v", status, h)
	}
	if status, _, _ := e.do("GET", "/static/", ""); status != 404 {
		t.Errorf("directory listing: %d", status)
	}
	status, _, b = e.do("GET", "/", "")
	if status != 200 || !strings.Contains(string(b), `content="agentmcp/default"`) || strings.Contains(string(b), "<script>") {
		t.Errorf("index: %d %s", status, b)
	}
}

// TestCallbackOpensNoAgent: the OAuth callback needs no token, so it must
// not create agents: calls for agents that are neither open nor stored get
// unknown_agent and open nothing. An awake agent answers its callbacks; a
// stored one that sleeps is not woken by a stray state.
func TestCallbackOpensNoAgent(t *testing.T) {
	t.Parallel()
	const max = 3
	e := newEnv(t, &Options{Token: "s3cret-token"})
	auth := "Authorization: Bearer s3cret-token"
	for i := range 2 * max {
		path := fmt.Sprintf("/agents/x/n%d/callback?state=s:abc&code=c", i)
		status, _, b := e.do("GET", path, "")
		if status != http.StatusNotFound || apiError(t, b).Code != api.CodeUnknownAgent {
			t.Fatalf("GET %s: %d %s, want 404 %s", path, status, b, api.CodeUnknownAgent)
		}
	}
	if got := e.srv.Agents(); len(got) != 0 {
		t.Fatalf("the callbacks opened agents: %v", got)
	}
	for i := range max {
		path := fmt.Sprintf("/agents/test/a%d", i)
		if status, _, b := e.do("PUT", path, "", auth); status != http.StatusCreated {
			t.Fatalf("PUT %s with the token: %d %s", path, status, b)
		}
	}

	// An open agent answers its callback (a stray state: the callback page
	// with the error, not unknown_agent).
	status, h, b := e.do("GET", "/agents/test/a0/callback?state=s:abc&code=c", "")
	if status != http.StatusBadRequest || !strings.HasPrefix(h.Get("Content-Type"), "text/html") {
		t.Errorf("callback of an open agent: %d %s %s", status, h.Get("Content-Type"), b)
	}

	// An agent with stored servers that is not open yet is not opened by a
	// callback whose state is none of its pending authorisations: it is
	// answered from the store (a genuine one wakes it: TestCallbackWakesAgent).
	e2 := newEnv(t, nil)
	row := store.Server{Namespace: "test/stored", ID: "s", Name: "s", URL: "http://127.0.0.1:1/mcp",
		CallbackURL: "http://127.0.0.1:1/agents/test/stored/callback", AuthURL: "http://127.0.0.1:1/authorize"}
	if err := e2.st.PutServer(testCtx(t), row); err != nil {
		t.Fatal(err)
	}
	status, h, b = e2.do("GET", "/agents/test/stored/callback?state=s:abc&code=c", "")
	if status != http.StatusBadRequest || !strings.HasPrefix(h.Get("Content-Type"), "text/html") {
		t.Errorf("callback of a stored agent: %d %s %s", status, h.Get("Content-Type"), b)
	}
	if diff := cmp.Diff([]api.AgentInfo{}, e2.srv.Agents()); diff != "" {
		t.Errorf("agents (-want +got):\n%s", diff)
	}
}

// TestBadTrustedOrigins: Open refuses a TrustedOrigins entry that is not an
// origin, rather than ignore it (it could never match, and the web app it
// was meant for would be refused without a word).
func TestBadTrustedOrigins(t *testing.T) {
	st, err := sqlite.Open(testCtx(t), filepath.Join(t.TempDir(), "agentmcp.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, origin := range []string{"http://localhost:5173/", "localhost:5173", "http://localhost:5173/app"} {
		if srv, err := Open(testCtx(t), st, &Options{TrustedOrigins: []string{origin}}); err == nil || !strings.Contains(err.Error(), origin) {
			if srv != nil {
				srv.Close(testCtx(t))
			}
			t.Errorf("Open with TrustedOrigins %q: %v; want an error naming it", origin, err)
		}
	}
}

// TestEncodedPathsNeedToken: the token check judges a path as the route
// that serves it. An encoded slash is part of one path segment for the
// routes, so "/agents/test/a%2Fcallback" is the agent root of agent
// "a/callback", not a callback, and needs the token; an encoded letter
// names the same route as the plain one.
func TestEncodedPathsNeedToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t, &Options{Token: "s3cret-token"})
	tests := []struct {
		path   string
		status int
	}{
		{"/agents/test/a%2Fcallback?state=x&code=y", 401},
		{"/agents/test/a%2fcallback?state=x&code=y", 401},
		{"/agents/test%2Fa/callback?state=x&code=y", 401},
		{"/agents/test/a%2F..%2Fb/callback?state=x&code=y", 404}, // the callback route; the name is refused
		{"/%61gents/test/a/servers", 401},
		{"/agents/test/a/%73ervers", 401},
		{"/agents/test/a/callback/?state=x&code=y", 401},
		{"/agents/test/a/x/../callback?state=x&code=y", 401},
		// The callback route, however spelled, needs none: it is the
		// callback that answers (unknown_agent: test/a has no servers).
		{"/agents/test/a/callback?state=x&code=y", 404},
		{"/agents/test/a/%63allback?state=x&code=y", 404},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			status, _, b := e.do("GET", tt.path, "")
			if status != tt.status {
				t.Fatalf("status %d, want %d: %s", status, tt.status, b)
			}
			if status == 404 && apiError(t, b).Code != api.CodeUnknownAgent {
				t.Errorf("not the callback's answer: %s", b)
			}
		})
	}
}
