package agent_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/internal/testing/peers"
	"github.com/agentmcp/agentmcp/mcpclient"
)

// follow visits an authorization URL as a browser would, without following
// the final redirect back to the callback, and returns that redirect.
func follow(t *testing.T, authURL string) *url.URL {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, err := resp.Location()
	if err != nil {
		t.Fatalf("authorization endpoint answered %d without a redirect", resp.StatusCode)
	}
	return loc
}

// callback delivers a callback redirect to the agent's handler.
func callback(t *testing.T, a *agent.Agent, loc *url.URL) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, loc.String(), nil)
	if !a.IsCallbackRequest(req) {
		t.Fatalf("%s is not recognised as a callback", loc.Path)
	}
	rec := httptest.NewRecorder()
	a.HandleOAuthCallback(rec, req)
	return rec
}

// TestOAuthTypeScriptServer: the TypeScript SDK's OAuth example server, run
// as a separate process: AddMCPServer returns authenticating; following
// the authorization URL leads to the agent's callback; the server becomes
// ready and a tool call succeeds.
func TestOAuthTypeScriptServer(t *testing.T) {
	peers.Require(t)
	srv := peers.StartOAuthExample(t)
	a := openAgent(t, openSQLite(t, ""), "ts-oauth", &agent.Options{CallbackHost: "http://127.0.0.1:9"})
	ctx := testCtx(t)
	res, err := a.AddMCPServer(ctx, "TS", srv.MCPURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.State != mcpclient.StateAuthenticating || res.AuthURL == "" {
		t.Fatalf("AddMCPServer = %+v; want authenticating with an auth URL", res)
	}
	rec := callback(t, a, follow(t, res.AuthURL))
	if rec.Code != http.StatusFound {
		t.Fatalf("callback answered %d: %s", rec.Code, rec.Body)
	}
	a.WaitForConnections(ctx)
	state := a.MCPServers().Servers[res.ID]
	if state.State != "ready" || state.AuthURL != nil {
		t.Fatalf("after the callback: %+v", state)
	}
	out, err := a.Manager().CallTool(ctx, res.ID, "greet", map[string]any{"name": "agentmcp"}, nil)
	if err != nil || out.IsError {
		t.Fatalf("greet: %v %+v", err, out)
	}
}
