package agent_test

import (
	"testing"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/mcpclient"
)

// TestAddAgainConnects: adding a stored server again when it has no
// connection (closed with CloseConnection, or never connected in an agent
// opened Dormant) connects it, as Reconnect does: requests are made (a
// handshake, or a resumed session's first) and the server is ready, not
// reported ready while not connected.
func TestAddAgainConnects(t *testing.T) {
	ctx := testCtx(t)
	s := serve(t, mcptest.Stateful)
	st := openSQLite(t, "")
	a := openAgent(t, st, "readd", nil)
	if _, err := a.AddMCPServer(ctx, "one", s.URL, &agent.AddOptions{ID: "one"}); err != nil {
		t.Fatal(err)
	}
	check := func(what string, a *agent.Agent) {
		t.Helper()
		requests := s.requests.Load()
		res, err := a.AddMCPServer(ctx, "one", s.URL, nil)
		if err != nil || res.State != mcpclient.StateReady || res.ID != "one" {
			t.Fatalf("%s: add again: %+v, %v", what, res, err)
		}
		if s.requests.Load() == requests {
			t.Errorf("%s: add again made no request", what)
		}
		if got, _ := a.Server("one"); got.State != string(mcpclient.StateReady) {
			t.Errorf("%s: after adding again the server is %s; want ready", what, got.State)
		}
		if _, err := a.Manager().CallTool(ctx, "one", "echo", map[string]any{"text": "hi"}, nil); err != nil {
			t.Errorf("%s: a call after adding again: %v", what, err)
		}
	}

	if err := a.Manager().CloseConnection(ctx, "one"); err != nil {
		t.Fatal(err)
	}
	check("closed connection", a)
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}

	d := openAgent(t, st, "readd", &agent.Options{Dormant: true})
	check("dormant agent", d)

	// Ready already: adding again changes nothing and makes no request.
	requests := s.requests.Load()
	if res, err := d.AddMCPServer(ctx, "one", s.URL, nil); err != nil || res.State != mcpclient.StateReady {
		t.Fatalf("add a ready server again: %+v, %v", res, err)
	}
	if n := s.requests.Load() - requests; n != 0 {
		t.Errorf("adding a ready server again made %d requests; want none", n)
	}
}
