package agent_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/internal/testing/oauthtest"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/netguard"
	"github.com/agentmcp/agentmcp/oauth"
	"github.com/agentmcp/agentmcp/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// oauthEnv is an authorization server, an OAuth-protected MCP server, and
// an agent whose providers run on the test's clock.
type oauthEnv struct {
	t     *testing.T
	clock *oauthtest.Clock
	as    *oauthtest.AuthServer
	res   *oauthtest.Resource
	srv   *mcptest.Server
	path  string // the SQLite file
	st    store.Store
	a     *agent.Agent
	// failTokenSave makes the providers' storage refuse to store tokens.
	failTokenSave atomic.Bool
	// beforeToken, when set, runs before each request the providers send
	// to the token endpoint (a real request, to the fake's socket, once it
	// returns).
	beforeToken atomic.Pointer[func()]
}

// tokenHook is a provider's transport that runs its env's beforeToken
// before each token request.
type tokenHook struct {
	e    *oauthEnv
	next http.RoundTripper
}

func (h tokenHook) RoundTrip(r *http.Request) (*http.Response, error) {
	if f := h.e.beforeToken.Load(); f != nil && r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/token") {
		(*f)()
	}
	return h.next.RoundTrip(r)
}

// errDiskFull is the storage failure failTokenSave injects.
var errDiskFull = errors.New("disk full")

// tokenSaveStorage is a provider's storage that refuses to store tokens
// while its env says so.
type tokenSaveStorage struct {
	oauth.Storage
	e *oauthEnv
}

func (s tokenSaveStorage) Put(ctx context.Context, key string, value []byte, expiresAt time.Time) error {
	if key == "token" && s.e.failTokenSave.Load() {
		return errDiskFull
	}
	return s.Storage.Put(ctx, key, value, expiresAt)
}

func newOAuthEnv(t *testing.T, opts *oauthtest.Options, ropts *oauthtest.ResourceOptions) *oauthEnv {
	e := &oauthEnv{t: t, clock: oauthtest.NewClock(time.Time{}), srv: mcptest.NewServer("protected")}
	if opts == nil {
		opts = &oauthtest.Options{}
	}
	opts.Now = e.clock.Now
	e.as = oauthtest.NewServer(t, opts)
	e.res = e.as.ServeMCP(t, mcptest.Handler(t, mcptest.Stateful, func() *mcp.Server { return e.srv.Server }), ropts)
	e.path = filepath.Join(t.TempDir(), "agent.db")
	e.open()
	return e
}

// open opens (or reopens, after a restart) the store and the agent.
func (e *oauthEnv) open() {
	e.st = openSQLite(e.t, e.path)
	e.a = openAgent(e.t, e.st, "oauth", &agent.Options{
		CallbackHost: "http://127.0.0.1:9",
		CreateOAuthProvider: func(p agent.ProviderParams) (agent.OAuthProvider, error) {
			hc := *p.HTTPClient
			next := hc.Transport
			if next == nil {
				next = http.DefaultTransport
			}
			hc.Transport = tokenHook{e, next}
			return oauth.New(tokenSaveStorage{p.Storage, e}, oauth.Config{ServerID: p.ServerID, ServerURL: p.ServerURL, RedirectURL: p.CallbackURL,
				Now: e.clock.Now, HTTPClient: &hc, Guard: p.Guard})
		},
	})
}

// restart closes the agent and its store and opens them again.
func (e *oauthEnv) restart() {
	e.a.Close(context.Background())
	e.st.Close()
	e.open()
}

// add adds the protected server, expecting authenticating.
func (e *oauthEnv) add(name string) agent.AddResult {
	e.t.Helper()
	r, err := e.a.AddMCPServer(testCtx(e.t), name, e.res.URL, nil)
	if err != nil || r.State != mcpclient.StateAuthenticating || r.AuthURL == "" {
		e.t.Fatalf("AddMCPServer = %+v, %v; want authenticating", r, err)
	}
	return r
}

// visit is the user at the authorization server; it returns the callback
// the browser would be sent to.
func (e *oauthEnv) visit(authURL string) *url.URL {
	e.t.Helper()
	loc, err := e.as.VisitAuthURL(testCtx(e.t), authURL)
	if err != nil {
		e.t.Fatal(err)
	}
	return loc
}

func (e *oauthEnv) callback(loc *url.URL) agent.CallbackResult {
	e.t.Helper()
	return e.a.HandleCallbackRequest(testCtx(e.t), httptest.NewRequest(http.MethodGet, loc.String(), nil))
}

// authorize runs the user's part and the callback, and waits for ready.
func (e *oauthEnv) authorize(r agent.AddResult) {
	e.t.Helper()
	if cb := e.callback(e.visit(r.AuthURL)); !cb.AuthSuccess {
		e.t.Fatalf("callback: %+v", cb)
	}
	e.a.WaitForConnections(testCtx(e.t))
	if s := e.a.MCPServers().Servers[r.ID]; s.State != "ready" {
		e.t.Fatalf("after authorizing: %+v", s)
	}
}

func (e *oauthEnv) state(id string) agent.MCPServer { return e.a.MCPServers().Servers[id] }

func TestOAuthFlow(t *testing.T) {
	e := newOAuthEnv(t, &oauthtest.Options{Iss: oauthtest.IssOn}, nil)
	r := e.add("Protected")
	if s := e.state(r.ID); s.State != "authenticating" || s.AuthURL == nil || *s.AuthURL != r.AuthURL {
		t.Fatalf("before the callback: %+v", s)
	}
	u, _ := url.Parse(r.AuthURL)
	q := u.Query()
	if q.Get("code_challenge_method") != "S256" || q.Get("resource") != e.res.URL || !strings.HasPrefix(q.Get("state"), r.ID+":") {
		t.Errorf("authorization URL lacks PKCE, resource or state: %v", q)
	}
	e.authorize(r)
	if _, err := e.a.Manager().CallTool(testCtx(t), r.ID, "echo", map[string]any{"text": "authorized"}, nil); err != nil {
		t.Fatal(err)
	}
	row, _ := e.st.GetServer(testCtx(t), e.a.Namespace(), r.ID)
	if row.AuthURL != "" {
		t.Errorf("auth URL still stored after success")
	}
}

// TestOAuthPendingURLWriteRacesCallback: a flow started by the Manager on
// its own (here a reconnect) queues the write of its URL; that write reads
// the URL, and the user's callback finishes the flow before it is written.
// The row must end with no URL, the flow being over.
func TestOAuthPendingURLWriteRacesCallback(t *testing.T) {
	e := newOAuthEnv(t, nil, nil)
	ctx := testCtx(t)
	r := e.add("Protected")
	reached, queued, release := agent.PauseAuthURLWrite(e.a, r.ID)
	defer release()
	res, err := e.a.Manager().Reconnect(ctx, r.ID) // a new flow, not through the agent
	if err != nil || res.State != mcpclient.StateAuthenticating || res.AuthURL == "" || res.AuthURL == r.AuthURL {
		t.Fatalf("Reconnect = %+v, %v; want authenticating with a new URL", res, err)
	}
	<-reached // the event's write read the new URL
	loc := e.visit(res.AuthURL)
	done := make(chan agent.CallbackResult, 1)
	go func() { done <- e.callback(loc) }()
	var cb agent.CallbackResult
	select {
	case <-queued: // the callback's write waits behind the paused one
		release()
		cb = <-done
	case cb = <-done:
		release() // the callback did not wait for the paused write
	}
	if !cb.AuthSuccess {
		t.Fatalf("callback: %+v", cb)
	}
	if row, err := e.st.GetServer(ctx, e.a.Namespace(), r.ID); err != nil || row.AuthURL != "" {
		t.Errorf("stored row after the flow: auth URL %q, %v; want none", row.AuthURL, err)
	}
	e.restart()
	e.a.WaitForConnections(ctx)
	if s := e.state(r.ID); s.State != "ready" {
		t.Errorf("after a restart: %+v; want ready with the stored token", s)
	}
}

// TestOAuthTwoServers: two servers authorising at once keep their flows
// apart.
func TestOAuthTwoServers(t *testing.T) {
	e := newOAuthEnv(t, nil, nil)
	r1 := e.add("One")
	r2, err := e.a.AddMCPServer(testCtx(t), "Two", e.res.URL, &agent.AddOptions{ID: "two"})
	if err != nil || r2.State != mcpclient.StateAuthenticating {
		t.Fatal(r2, err)
	}
	loc1, loc2 := e.visit(r1.AuthURL), e.visit(r2.AuthURL)
	var wg sync.WaitGroup
	var cb1, cb2 agent.CallbackResult
	wg.Go(func() { cb1 = e.callback(loc2) }) // in the "wrong" order, at once
	wg.Go(func() { cb2 = e.callback(loc1) })
	wg.Wait()
	if !cb1.AuthSuccess || !cb2.AuthSuccess || cb1.ServerID != "two" || cb2.ServerID != r1.ID {
		t.Fatalf("callbacks: %+v %+v", cb1, cb2)
	}
	e.a.WaitForConnections(testCtx(t))
	for _, id := range []string{r1.ID, "two"} {
		if s := e.state(id); s.State != "ready" {
			t.Errorf("%s: %+v", id, s)
		}
	}
}

// TestOAuthCallbackReplays: a duplicate callback after success is a
// harmless success; a replayed or foreign state changes nothing.
func TestOAuthCallbackReplays(t *testing.T) {
	e := newOAuthEnv(t, nil, nil)
	r := e.add("One")
	loc := e.visit(r.AuthURL)
	if cb := e.callback(loc); !cb.AuthSuccess {
		t.Fatal(cb)
	}
	e.a.WaitForConnections(testCtx(t))
	codeGrants := e.as.Counts.CodeGrants.Load()
	// The user reloads the callback page.
	if cb := e.callback(loc); !cb.AuthSuccess {
		t.Errorf("duplicate callback: %+v", cb)
	}
	if n := e.as.Counts.CodeGrants.Load(); n != codeGrants {
		t.Errorf("the duplicate exchanged the code again")
	}
	if s := e.state(r.ID); s.State != "ready" {
		t.Errorf("after the duplicate: %+v", s)
	}

	// A second server waits for its user; A's old state, and a forged one,
	// are presented for it.
	r2, _ := e.a.AddMCPServer(testCtx(t), "Two", e.res.URL, &agent.AddOptions{ID: "two"})
	replay := *loc
	q := replay.Query()
	q.Set("state", "two:"+strings.SplitN(q.Get("state"), ":", 2)[1]) // A's nonce, B's id
	replay.RawQuery = q.Encode()
	for _, bad := range []*url.URL{&replay, mustURL(t, "http://127.0.0.1:9/agents/test-agent/oauth/callback?code=x&state=two:forged")} {
		cb := e.callback(bad)
		if cb.AuthSuccess || cb.AuthError == "" {
			t.Errorf("bad state accepted: %+v", cb)
		}
		if s := e.state("two"); s.State != "authenticating" || s.AuthURL == nil || *s.AuthURL != r2.AuthURL {
			t.Errorf("a bad state changed the flow: %+v", s)
		}
	}
	// The genuine callback still completes.
	e.authorize(r2)
}

// TestOAuthExpiredState: a callback after the state's lifetime is refused
// with a clear message, and the flow can be started again.
func TestOAuthExpiredState(t *testing.T) {
	e := newOAuthEnv(t, &oauthtest.Options{CodeTTL: time.Hour}, nil)
	r := e.add("One")
	loc := e.visit(r.AuthURL)
	e.clock.Advance(oauth.StateLifetime + time.Second)
	cb := e.callback(loc)
	if cb.AuthSuccess || !strings.Contains(cb.AuthError, "expired") {
		t.Fatalf("expired state: %+v", cb)
	}
	if s := e.state(r.ID); s.State != "authenticating" {
		t.Errorf("after the expired callback: %+v", s)
	}
	// Adding again gives a fresh, working URL.
	again, err := e.a.AddMCPServer(testCtx(t), "One", e.res.URL, nil)
	if err != nil || again.AuthURL == r.AuthURL || again.State != mcpclient.StateAuthenticating {
		t.Fatalf("re-add after expiry: %+v, %v", again, err)
	}
	e.authorize(again)
}

// TestOAuthDeniedXSS: an error from the authorization server fails the
// server with its message, escaped for HTML wherever it is shown.
func TestOAuthDeniedXSS(t *testing.T) {
	e := newOAuthEnv(t, nil, nil)
	r := e.add("One")
	payload := `<script>alert("x")</script>`
	e.as.Deny(payload)
	loc := e.visit(r.AuthURL)
	rec := httptest.NewRecorder()
	e.a.HandleOAuthCallback(rec, httptest.NewRequest(http.MethodGet, loc.String(), nil))
	body := rec.Body.String()
	if rec.Code != http.StatusBadRequest || strings.Contains(body, "<script>") || !strings.Contains(body, "&lt;script&gt;") {
		t.Errorf("error page (%d): %s", rec.Code, body)
	}
	s := e.state(r.ID)
	if s.State != "failed" || s.Error == nil || strings.Contains(*s.Error, "<script>") || !strings.Contains(*s.Error, "&lt;script&gt;") {
		t.Errorf("server after access_denied: %+v", s)
	}
	// With an error redirect, the message goes in the query.
	e.a.ConfigureOAuthCallback(agent.OAuthCallbackConfig{ErrorRedirect: "/oops", SuccessRedirect: "/done"})
	rec = httptest.NewRecorder()
	e.a.HandleOAuthCallback(rec, httptest.NewRequest(http.MethodGet, loc.String(), nil))
	if got := rec.Header().Get("Location"); rec.Code != http.StatusFound || !strings.HasPrefix(got, "http://127.0.0.1:9/oops?error=") {
		t.Errorf("error redirect: %d %s", rec.Code, got)
	}
}

// TestOAuthRestartMidFlow: a restart between authenticating and the
// callback still completes, and the registration is reused.
func TestOAuthRestartMidFlow(t *testing.T) {
	e := newOAuthEnv(t, nil, nil)
	r := e.add("One")
	loc := e.visit(r.AuthURL)
	e.restart()
	if s := e.state(r.ID); s.State != "authenticating" || s.AuthURL == nil {
		t.Fatalf("after the restart: %+v", s)
	}
	req := httptest.NewRequest(http.MethodGet, loc.String(), nil)
	if !e.a.IsCallbackRequest(req) {
		t.Fatal("the callback is not recognised after the restart")
	}
	if cb := e.callback(loc); !cb.AuthSuccess {
		t.Fatalf("callback after the restart: %+v", cb)
	}
	e.a.WaitForConnections(testCtx(t))
	if s := e.state(r.ID); s.State != "ready" {
		t.Fatalf("%+v", s)
	}
	// Tokens survive another restart; nothing is registered again.
	e.restart()
	e.a.WaitForConnections(testCtx(t))
	if s := e.state(r.ID); s.State != "ready" {
		t.Errorf("after the second restart: %+v", s)
	}
	if n := e.as.Counts.Registrations.Load(); n != 1 {
		t.Errorf("%d registrations", n)
	}
}

// TestOAuthRefresh: after expiry (and a restart), concurrent calls make
// exactly one refresh; a 503 keeps the refresh token; invalid_grant sends
// the server back to authenticating with a fresh URL.
func TestOAuthRefresh(t *testing.T) {
	e := newOAuthEnv(t, &oauthtest.Options{AccessTokenTTL: 10 * time.Minute, RefreshTokens: oauthtest.RefreshAlways}, nil)
	r := e.add("One")
	e.authorize(r)
	e.restart()
	e.a.WaitForConnections(testCtx(t))

	e.clock.Advance(11 * time.Minute)
	before := e.as.Counts.RefreshGrants.Load()
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range 20 {
		wg.Go(func() {
			_, errs[i] = e.a.Manager().CallTool(testCtx(t), r.ID, "echo", map[string]any{"text": fmt.Sprint(i)}, nil)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("call %d: %v", i, err)
		}
	}
	if n := e.as.Counts.RefreshGrants.Load() - before; n != 1 {
		t.Errorf("%d refresh requests for 20 concurrent calls; want 1", n)
	}

	// A 503 from the token endpoint: the call fails, the refresh token is
	// kept and works once the endpoint is back.
	e.clock.Advance(11 * time.Minute)
	e.as.FailTokenRequests(3, oauthtest.FaultUnavailable)
	if _, err := e.a.Manager().CallTool(testCtx(t), r.ID, "echo", map[string]any{"text": "x"}, nil); err == nil {
		t.Errorf("call during the token endpoint outage succeeded")
	}
	if _, err := e.a.Manager().CallTool(testCtx(t), r.ID, "echo", map[string]any{"text": "x"}, nil); err != nil {
		t.Errorf("call after the outage: %v", err)
	}

	// invalid_grant: back to authenticating, with a new authorization URL.
	e.clock.Advance(11 * time.Minute)
	e.as.FailTokenRequests(1, oauthtest.FaultInvalidGrant)
	_, err := e.a.Manager().CallTool(testCtx(t), r.ID, "echo", map[string]any{"text": "x"}, nil)
	var areq *mcpclient.AuthRequiredError
	if !errors.As(err, &areq) || areq.AuthURL == "" {
		t.Fatalf("call after invalid_grant: %v; want AuthRequiredError", err)
	}
	e.a.WaitForConnections(testCtx(t))
	if s := e.state(r.ID); s.State != "authenticating" || s.AuthURL == nil || *s.AuthURL != areq.AuthURL {
		t.Errorf("after invalid_grant: %+v", s)
	}
	e.authorize(agent.AddResult{ID: r.ID, AuthURL: areq.AuthURL})
}

// TestOAuthStepUp: a 403 insufficient_scope asks for the union of the
// granted and the challenged scopes.
func TestOAuthStepUp(t *testing.T) {
	e := newOAuthEnv(t, &oauthtest.Options{Scopes: []string{"mcp:read", "mcp:write"}},
		&oauthtest.ResourceOptions{ChallengeScopes: []string{"mcp:read"}, ToolScopes: map[string][]string{"increment": {"mcp:write"}}})
	r := e.add("One")
	e.authorize(r)
	_, err := e.a.Manager().CallTool(testCtx(t), r.ID, "increment", nil, nil)
	var areq *mcpclient.AuthRequiredError
	if !errors.As(err, &areq) {
		t.Fatalf("increment with mcp:read: %v; want AuthRequiredError", err)
	}
	u, _ := url.Parse(areq.AuthURL)
	if got := u.Query().Get("scope"); !strings.Contains(got, "mcp:read") || !strings.Contains(got, "mcp:write") {
		t.Errorf("step-up scope %q; want mcp:read and mcp:write", got)
	}
	e.authorize(agent.AddResult{ID: r.ID, AuthURL: areq.AuthURL})
	if _, err := e.a.Manager().CallTool(testCtx(t), r.ID, "increment", nil, nil); err != nil {
		t.Errorf("increment after step-up: %v", err)
	}
}

// TestOAuthRefusals: metadata for another resource, and an authorization
// server on a metadata address, are refused before anything is sent.
func TestOAuthRefusals(t *testing.T) {
	t.Run("resource mismatch", func(t *testing.T) {
		e := newOAuthEnv(t, nil, &oauthtest.ResourceOptions{MetadataResource: "https://evil.example.com/mcp"})
		_, err := e.a.AddMCPServer(testCtx(t), "One", e.res.URL, nil)
		if !errors.Is(err, oauth.ErrResourceMismatch) {
			t.Errorf("AddMCPServer = %v; want ErrResourceMismatch", err)
		}
		if n := e.as.Counts.Authorizations.Load() + e.as.Counts.Registrations.Load(); n != 0 {
			t.Errorf("%d requests reached the authorization server", n)
		}
	})
	t.Run("metadata address", func(t *testing.T) {
		e := newOAuthEnv(t, nil, &oauthtest.ResourceOptions{AuthorizationServers: []string{"https://169.254.169.254/"}})
		_, err := e.a.AddMCPServer(testCtx(t), "One", e.res.URL, nil)
		if !errors.Is(err, netguard.ErrBlockedURL) {
			t.Errorf("AddMCPServer = %v; want Blocked URL", err)
		}
	})
}

// TestOAuthCallbackFailures: every way a callback with a redeemable state
// can fail fails the server with the reason in its error field (the seed:
// "If OAuth fails, the connection state becomes failed and the error
// message is stored in the server.error field"), clears its authorization
// URL and spends the state; nothing is left authenticating, and the user
// can start again.
func TestOAuthCallbackFailures(t *testing.T) {
	tests := []struct {
		name string
		// prepare runs before the callback; it may change the callback URL.
		prepare func(e *oauthEnv, loc *url.URL)
		want    string // in the server's error and the result's
	}{
		{"no code", func(e *oauthEnv, loc *url.URL) { setQuery(loc, "code", "") }, "no code provided"},
		{"error parameter", func(e *oauthEnv, loc *url.URL) {
			setQuery(loc, "code", "")
			setQuery(loc, "error", "access_denied")
			setQuery(loc, "error_description", "the user said no")
		}, "the user said no"},
		{"token request refused", func(e *oauthEnv, loc *url.URL) { e.as.FailTokenRequests(1, oauthtest.FaultInvalidGrant) }, "invalid_grant"},
		{"token endpoint unreachable", func(e *oauthEnv, loc *url.URL) { e.as.FailTokenRequests(1, oauthtest.FaultDropConnection) }, "token exchange failed"},
		{"token endpoint unavailable", func(e *oauthEnv, loc *url.URL) { e.as.FailTokenRequests(1, oauthtest.FaultUnavailable) }, "temporarily_unavailable"},
		{"tokens not stored", func(e *oauthEnv, loc *url.URL) { e.failTokenSave.Store(true) }, "disk full"},
		{"issuer mismatch", func(e *oauthEnv, loc *url.URL) { setQuery(loc, "iss", "https://attacker.example") }, "another issuer"},
		{"server closed meanwhile", func(e *oauthEnv, loc *url.URL) {
			if err := e.a.Manager().CloseConnection(testCtx(e.t), "one"); err != nil {
				e.t.Fatal(err)
			}
		}, `not-connected`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newOAuthEnv(t, nil, nil)
			r, err := e.a.AddMCPServer(testCtx(t), "One", e.res.URL, &agent.AddOptions{ID: "one"})
			if err != nil || r.State != mcpclient.StateAuthenticating {
				t.Fatal(r, err)
			}
			loc := e.visit(r.AuthURL)
			tt.prepare(e, loc)
			cb := e.callback(loc)
			if cb.AuthSuccess || cb.ServerID != "one" || !strings.Contains(cb.AuthError, tt.want) {
				t.Errorf("callback = %+v; want a failure with %q", cb, tt.want)
			}
			s := e.state("one")
			if s.State != "failed" || s.Error == nil || !strings.Contains(*s.Error, tt.want) || s.AuthURL != nil {
				t.Errorf("server after the failed callback: %+v; want failed with %q", s, tt.want)
			}
			row, err := e.st.GetServer(testCtx(t), e.a.Namespace(), "one")
			if err != nil || row.AuthURL != "" {
				t.Errorf("stored auth URL after the failure: %q, %v", row.AuthURL, err)
			}
			// The state is spent: the same callback, made whole, is refused
			// and changes nothing.
			e.failTokenSave.Store(false)
			setQuery(loc, "iss", "")
			setQuery(loc, "error", "")
			setQuery(loc, "error_description", "")
			if loc.Query().Get("code") == "" {
				setQuery(loc, "code", "some-code")
			}
			grants := e.as.Counts.CodeGrants.Load()
			if cb := e.callback(loc); cb.AuthSuccess || !strings.Contains(cb.AuthError, "state not found") {
				t.Errorf("replayed callback = %+v; want state not found", cb)
			}
			if n := e.as.Counts.CodeGrants.Load(); n != grants {
				t.Errorf("the replay reached the token endpoint")
			}
			// The user starts again and succeeds.
			if err := e.a.RemoveMCPServer(testCtx(t), "one"); err != nil {
				t.Fatal(err)
			}
			again, err := e.a.AddMCPServer(testCtx(t), "One", e.res.URL, &agent.AddOptions{ID: "one"})
			if err != nil || again.State != mcpclient.StateAuthenticating {
				t.Fatalf("re-add after the failure: %+v, %v", again, err)
			}
			e.authorize(again)
		})
	}
}

// TestOAuthStrayCallbackWhenReady: a callback for a server that is
// already ready, with a state that was never issued, changes nothing and
// says so (Unchanged), rather than claiming to have authorized it.
func TestOAuthStrayCallbackWhenReady(t *testing.T) {
	e := newOAuthEnv(t, nil, nil)
	r := e.add("One")
	e.authorize(r)
	grants := e.as.Counts.CodeGrants.Load()
	cb := e.callback(mustURL(t, "http://127.0.0.1:9/agents/test-agent/oauth/callback?code=x&state="+r.ID+":forged"))
	if !cb.AuthSuccess || !cb.Unchanged || cb.ServerID != r.ID {
		t.Errorf("stray callback = %+v; want success, unchanged", cb)
	}
	if n := e.as.Counts.CodeGrants.Load(); n != grants {
		t.Errorf("the stray callback reached the token endpoint")
	}
	if s := e.state(r.ID); s.State != "ready" {
		t.Errorf("after the stray callback: %+v", s)
	}
}

func setQuery(u *url.URL, key, value string) {
	q := u.Query()
	if value == "" {
		q.Del(key)
	} else {
		q.Set(key, value)
	}
	u.RawQuery = q.Encode()
}

func mustURL(t *testing.T, s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestIsCallbackRequestEscapedPath: a callback path is matched as sent:
// an encoded slash makes another path, as it does for routing.
func TestIsCallbackRequestEscapedPath(t *testing.T) {
	e := newOAuthEnv(t, nil, nil)
	r := e.add("One")
	loc := e.visit(r.AuthURL)
	if !e.a.IsCallbackRequest(httptest.NewRequest(http.MethodGet, loc.String(), nil)) {
		t.Fatalf("the callback %s is not recognised", loc)
	}
	escaped := strings.Replace(loc.String(), "/oauth/callback", "%2Foauth/callback", 1)
	if escaped == loc.String() {
		t.Fatalf("unexpected callback path %s", loc.Path)
	}
	if e.a.IsCallbackRequest(httptest.NewRequest(http.MethodGet, escaped, nil)) {
		t.Errorf("%s is recognised as the callback %s", escaped, loc)
	}
}

// pauseFirstToken pauses the first token request from now on: entered is
// closed when it starts, and it goes on when release is called.
func (e *oauthEnv) pauseFirstToken() (entered <-chan struct{}, release func()) {
	in, out := make(chan struct{}), make(chan struct{})
	var first atomic.Bool
	f := func() {
		if first.CompareAndSwap(false, true) { // the others go on
			close(in)
			<-out
		}
	}
	e.beforeToken.Store(&f)
	release = sync.OnceFunc(func() { close(out) })
	e.t.Cleanup(release)
	return in, release
}

// callbackAsync runs the callback of loc in the background.
func (e *oauthEnv) callbackAsync(loc *url.URL) <-chan agent.CallbackResult {
	done := make(chan agent.CallbackResult, 1)
	go func() {
		done <- e.a.HandleCallbackRequest(testCtx(e.t), httptest.NewRequest(http.MethodGet, loc.String(), nil))
	}()
	return done
}

// TestOAuthCallbacksSerialised: the callbacks of one server are handled
// one at a time. Each case starts a first callback and holds its token
// request; a second one, sent meanwhile, must wait for it (it is seen
// waiting) rather than run beside it: then one code is redeemed (one token
// request), the server ends ready, never failed, and the second callback
// changes nothing.
func TestOAuthCallbacksSerialised(t *testing.T) {
	for _, tt := range []struct {
		name string
		// second is the callback sent while the first's token request is
		// held, given the first flow's callback and a second flow's.
		second func(first, other *url.URL) *url.URL
		// flows is how many flows are started before the callbacks.
		flows int
	}{
		{"identical", func(first, _ *url.URL) *url.URL { return first }, 1},
		{"two flows", func(_, other *url.URL) *url.URL { return other }, 2},
		{"an error for the superseded flow", func(_, other *url.URL) *url.URL {
			denied := *other
			q := denied.Query()
			q.Del("code")
			q.Set("error", "access_denied")
			denied.RawQuery = q.Encode()
			return &denied
		}, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newOAuthEnv(t, nil, nil)
			ctx := testCtx(t)
			r := e.add("One")
			locs := []*url.URL{e.visit(r.AuthURL)}
			if tt.flows == 2 {
				again, err := e.a.Reconnect(ctx, r.ID)
				if err != nil || again.AuthURL == "" || again.AuthURL == r.AuthURL {
					t.Fatalf("Reconnect = %+v, %v; want a new flow", again, err)
				}
				// The newer flow's callback goes first; the superseded
				// one's comes second.
				locs = []*url.URL{e.visit(again.AuthURL), locs[0]}
			} else {
				locs = append(locs, nil)
			}
			waiting := make(chan struct{})
			var once sync.Once
			agent.OnCallbackWait(e.a, func(string) { once.Do(func() { close(waiting) }) })
			entered, release := e.pauseFirstToken()
			first := e.callbackAsync(locs[0])
			<-entered
			second := e.callbackAsync(tt.second(locs[0], locs[1]))
			var cb2 agent.CallbackResult
			select {
			case <-waiting:
			case cb2 = <-second:
				// It did not wait: it ran beside the first one.
				t.Errorf("the second callback ran while the first exchanged its code: %+v; server %+v", cb2, e.state(r.ID))
				second = nil
			}
			release()
			if cb := <-first; !cb.AuthSuccess || cb.Unchanged {
				t.Fatalf("first callback: %+v", cb)
			}
			if second != nil {
				cb2 = <-second
				if !cb2.Unchanged || !cb2.AuthSuccess {
					t.Errorf("second callback: %+v; want unchanged", cb2)
				}
			}
			e.a.WaitForConnections(ctx)
			if s := e.state(r.ID); s.State != "ready" || s.Error != nil {
				t.Errorf("server after both callbacks: %+v; want ready", s)
			}
			if n := e.as.Counts.CodeGrants.Load(); n != 1 {
				t.Errorf("%d code grants; want 1", n)
			}
		})
	}
}

// TestOAuthSupersededDenied: with two flows pending, the user denies the
// older one's popup: that changes nothing (the server still waits, for
// the newer flow, whose callback then completes it), where it used to fail
// the server.
func TestOAuthSupersededDenied(t *testing.T) {
	e := newOAuthEnv(t, nil, nil)
	ctx := testCtx(t)
	r := e.add("One")
	old := e.visit(r.AuthURL)
	again, err := e.a.Reconnect(ctx, r.ID)
	if err != nil || again.AuthURL == r.AuthURL {
		t.Fatalf("Reconnect = %+v, %v; want a new flow", again, err)
	}
	q := old.Query()
	q.Del("code")
	q.Set("error", "access_denied")
	old.RawQuery = q.Encode()
	if cb := e.callback(old); cb.AuthSuccess || cb.AuthError == "" {
		t.Errorf("the superseded flow's denial: %+v; want its error", cb)
	}
	if s := e.state(r.ID); s.State != "authenticating" || s.AuthURL == nil || *s.AuthURL != again.AuthURL {
		t.Fatalf("after the superseded flow's denial: %+v; want authenticating at the newer flow", s)
	}
	e.authorize(agent.AddResult{ID: r.ID, AuthURL: again.AuthURL})
}

// TestOAuthURLStoredBeforeUpdate: a watcher that reads the store when an
// update shows a server authenticating finds the update's authorization
// URL stored: the update waits for the URL's write (held here until the
// update is seen waiting for it).
func TestOAuthURLStoredBeforeUpdate(t *testing.T) {
	e := newOAuthEnv(t, nil, nil)
	ctx := testCtx(t)
	r := e.add("Protected")
	w := e.a.Watch(64)
	defer w.Stop()
	<-w.Updates() // the snapshot
	_, _, release := agent.PauseAuthURLWrite(e.a, r.ID)
	t.Cleanup(release)
	agent.OnAuthURLWait(e.a, func() { release() })
	res, err := e.a.Manager().Reconnect(ctx, r.ID) // a new flow, not through the agent
	if err != nil || res.AuthURL == "" || res.AuthURL == r.AuthURL {
		t.Fatalf("Reconnect = %+v, %v; want a new flow", res, err)
	}
	for {
		select {
		case up := <-w.Updates():
			if up.State == nil {
				continue
			}
			s := up.State.Servers[r.ID]
			if s.State != "authenticating" || s.AuthURL == nil || *s.AuthURL != res.AuthURL {
				continue
			}
			row, err := e.st.GetServer(ctx, e.a.Namespace(), r.ID)
			if err != nil || row.AuthURL != res.AuthURL {
				t.Fatalf("on the update showing the new flow, the stored URL is %q (%v); want the update's", row.AuthURL, err)
			}
			return
		case <-w.Done():
			t.Fatalf("watch ended: %v", w.Err())
		case <-ctx.Done():
			t.Fatal("no update showed the new flow")
		}
	}
}
