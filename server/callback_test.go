package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/internal/testing/oauthtest"
)

// TestCallbackPages: through serve's callback route, a callback with a
// redeemable state and no code fails the server and says why; after a
// genuine success, a forged callback for the ready server says that
// nothing changed, not "Authorized".
func TestCallbackPages(t *testing.T) {
	t.Parallel()
	as := oauthtest.NewServer(t, nil)
	srv := mcptest.NewServer("private")
	res := as.ServeMCP(t, mcptest.Handler(t, mcptest.Stateless, func() *mcp.Server { return srv.Server }), nil)
	e := newEnv(t, nil)
	c := e.client("test", "a")
	ctx := testCtx(t)

	add := func() *url.URL {
		t.Helper()
		r, err := c.AddMCPServer(ctx, api.AddRequest{Name: "private", URL: res.URL, ID: "private"})
		if err != nil || r.AuthURL == "" {
			t.Fatalf("add: %+v, %v", r, err)
		}
		loc, err := as.VisitAuthURL(ctx, r.AuthURL)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(loc.String(), e.ts.URL+"/agents/test/a/callback?") {
			t.Fatalf("callback URL %s", loc)
		}
		return loc
	}
	get := func(u string) (int, string) {
		t.Helper()
		status, _, b := e.do("GET", strings.TrimPrefix(u, e.ts.URL), "")
		return status, string(b)
	}

	// No code: the server fails, the page says why.
	loc := add()
	q := loc.Query()
	q.Del("code")
	loc.RawQuery = q.Encode()
	status, page := get(loc.String())
	if status != http.StatusBadRequest || !strings.Contains(page, "Authorization failed") || !strings.Contains(page, "no code provided") {
		t.Errorf("callback without a code: %d %s", status, page)
	}
	st, err := c.MCPServers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s := st.Servers["private"]; s.State != "failed" || s.Error == nil || !strings.Contains(*s.Error, "no code provided") {
		t.Errorf("server after a callback without a code: %+v", s)
	}

	// Start again, and succeed.
	if err := c.RemoveMCPServer(ctx, "private"); err != nil {
		t.Fatal(err)
	}
	loc = add()
	if status, page := get(loc.String()); status != http.StatusOK || !strings.Contains(page, "<h2>Authorized</h2>") {
		t.Fatalf("genuine callback: %d %s", status, page)
	}
	e.srv.WaitForConnections(ctx)

	// A forged callback for the ready server changes nothing, and says so.
	status, page = get(e.ts.URL + "/agents/test/a/callback?state=private:forged&code=x")
	if status != http.StatusOK || !strings.Contains(page, "Already authorized") || !strings.Contains(page, "nothing changed") ||
		strings.Contains(page, "<h2>Authorized</h2>") || !strings.Contains(page, `data-outcome="unchanged"`) {
		t.Errorf("forged callback for a ready server: %d %s", status, page)
	}
	st, err = c.MCPServers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s := st.Servers["private"]; s.State != "ready" {
		t.Errorf("server after the forged callback: %+v", s)
	}
}

// TestForgedCallbackSleeping: forged OAuth callbacks for a sleeping agent
// (no state, a malformed one, a made-up nonce for its OAuth-capable
// server, one naming its stdio server or no server) are refused from the
// store alone: the agent is not woken and its stdio server, a real
// process, is not started.
func TestForgedCallbackSleeping(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	auth := "Authorization: Bearer tok"
	e := newEnv(t, &Options{Token: "tok", AllowStdioServers: true})
	_, url := mcpServer(t, "one")
	c := e.client("test", "a")
	ctx := testCtx(t)
	if _, err := c.AddMCPServer(ctx, api.AddRequest{Name: "one", URL: url, ID: "one"}); err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(api.AddRequest{Name: "local", ID: "local", Command: os.Args[0], Args: []string{"-test.run=^$"},
		Env: map[string]string{"AGENTMCP_TEST_STDIO_SERVER": "1", "AGENTMCP_TEST_PID_FILE": pidFile}})
	if status, _, b := e.do("POST", agentPath+"/servers", string(body), auth); status != http.StatusCreated {
		t.Fatalf("adding the stdio server: %d %s", status, b)
	}
	if status, _, b := e.do("POST", agentPath+"/hibernate", "", auth); status != http.StatusNoContent {
		t.Fatalf("hibernate: %d %s", status, b)
	}
	if e.awake("test", "a") {
		t.Fatal("awake after hibernating")
	}
	if err := os.Remove(pidFile); err != nil {
		t.Fatal(err)
	}

	for _, q := range []string{
		"", "state=forged", "state=forged&code=x", "state=one:forged&code=x", "state=one:forged&error=access_denied",
		"state=local:forged&code=x", "state=nosuch:forged&code=x", "state=:x&code=x", "state=one:&code=x", "code=x",
	} {
		status, _, b := e.do("GET", agentPath+"/callback?"+q, "")
		if status != http.StatusBadRequest || !strings.Contains(string(b), "Authorization failed") {
			t.Errorf("forged callback ?%s: %d %s; want 400 and the failure page", q, status, b)
		}
	}
	if e.awake("test", "a") {
		t.Error("a forged callback woke the agent")
	}
	if _, err := os.Stat(pidFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a forged callback started the stdio server: %v", err)
	}
}
