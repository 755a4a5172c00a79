package agent_test

import (
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
