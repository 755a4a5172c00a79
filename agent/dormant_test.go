package agent_test

import (
	"net/http"
	"testing"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/mcpclient"
)

// TestDormantAndRestored: a Dormant agent shows its servers as stored
// (not-connected, the keep-awake mark) and sends nothing until one is
// reconnected; an agent opened normally lists its servers' catalogs in
// full once WaitRestored returns.
func TestDormantAndRestored(t *testing.T) {
	ctx := testCtx(t)
	one, two := serve(t, mcptest.Stateful), serve(t, mcptest.Stateless)
	st := openSQLite(t, "")
	a, err := agent.Open(ctx, st, "TestAgent", "dormant", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.AddMCPServer(ctx, "one", one.URL, &agent.AddOptions{ID: "one", KeepAwake: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.AddMCPServer(ctx, "two", two.URL, &agent.AddOptions{ID: "two"}); err != nil {
		t.Fatal(err)
	}
	want := len(a.ListTools(mcpclient.Filter{}))
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}

	before := one.requests.Load()
	d := openAgent(t, st, "dormant", &agent.Options{Dormant: true})
	state := d.MCPServers()
	for id, s := range state.Servers {
		if s.State != string(mcpclient.StateNotConnected) {
			t.Errorf("dormant server %s is %s", id, s.State)
		}
	}
	if !state.Servers["one"].KeepAwake || state.Servers["two"].KeepAwake {
		t.Errorf("keep-awake marks: %+v", state.Servers)
	}
	if res, err := d.Reconnect(ctx, "two"); err != nil || res.State != mcpclient.StateReady {
		t.Fatalf("reconnect: %+v %v", res, err)
	}
	if s, _ := d.Server("two"); s.State != string(mcpclient.StateReady) {
		t.Errorf("reconnected server is %s", s.State)
	}
	if n := one.requests.Load() - before; n != 0 {
		t.Errorf("the dormant server got %d requests", n)
	}
	d.Close(ctx)

	w := openAgent(t, st, "dormant", nil)
	w.WaitRestored(ctx)
	if got := len(w.ListTools(mcpclient.Filter{})); got != want {
		t.Errorf("%d tools once restored, want %d", got, want)
	}
}

// TestRestoredForgottenSession: a restored server whose stored session the
// server no longer knows gets its one fresh handshake before WaitRestored
// returns, so that a request listing catalogs right after the wake sees
// them whole rather than empty.
func TestRestoredForgottenSession(t *testing.T) {
	ctx := testCtx(t)
	up := serve(t, mcptest.Stateful)
	st := openSQLite(t, "")
	a, err := agent.Open(ctx, st, "TestAgent", "forgotten", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.AddMCPServer(ctx, "one", up.URL, &agent.AddOptions{ID: "one"}); err != nil {
		t.Fatal(err)
	}
	want := len(a.ListTools(mcpclient.Filter{}))
	srv, _ := a.Server("one")
	if srv.SessionID == "" || want == 0 {
		t.Fatalf("no session or no tools to restore: %+v, %d tools", srv, want)
	}
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// The server forgets the session (it restarted, or another process
	// ended it) while the agent sleeps.
	req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, up.URL, nil)
	req.Header.Set("Mcp-Session-Id", srv.SessionID)
	req.Header.Set("Mcp-Protocol-Version", srv.ProtocolVersion)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	w := openAgent(t, st, "forgotten", nil)
	w.WaitRestored(ctx)
	if got := len(w.ListTools(mcpclient.Filter{})); got != want {
		s, _ := w.Server("one")
		t.Errorf("%d tools once restored, want %d (server %s)", got, want, s.State)
	}
}
