package agent_test

import (
	"testing"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
)

// TestServerStats: the agent reports the figures of its servers' tool
// calls, by id, from its Manager; a stored server it never called has
// zero figures.
func TestServerStats(t *testing.T) {
	s := serve(t, mcptest.Stateless)
	a := openAgent(t, openSQLite(t, ""), "stats", nil)
	ctx := testCtx(t)
	called, err := a.AddMCPServer(ctx, "Called", s.URL, &agent.AddOptions{ID: "called"})
	if err != nil {
		t.Fatal(err)
	}
	idle, err := a.AddMCPServer(ctx, "Idle", s.URL, &agent.AddOptions{ID: "idle"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"echo", "echo", "fail"} {
		if _, err := a.CallTool(ctx, called.ID, tool, map[string]any{"text": "x"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	stats := a.ServerStats()
	if len(stats) != 2 {
		t.Fatalf("stats of %d servers; want 2: %+v", len(stats), stats)
	}
	if got := stats[called.ID]; got.Calls != 3 || got.Errors != 1 || got.TotalCalls != 3 || got.P50 <= 0 {
		t.Errorf("called: %+v; want 3 calls, 1 error", got)
	}
	if got := stats[idle.ID]; got.Calls != 0 || got.TotalCalls != 0 {
		t.Errorf("idle: %+v; want no calls", got)
	}
}
