package agent_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/mcpclient"
)

// TestServersAndAITools: the agent lists its servers with their names and
// states, and its tools as LLM tools with keys over all of them, as its
// Manager does, without a caller reaching for the Manager (package
// gateway uses these).
func TestServersAndAITools(t *testing.T) {
	ctx := testCtx(t)
	one, two := serve(t, mcptest.Stateful), serve(t, mcptest.Stateless)
	a := openAgent(t, openSQLite(t, ""), "catalog", nil)
	for _, s := range []struct{ name, id, url string }{{"Docs", "docs", one.URL}, {"Search", "search", two.URL}} {
		if res, err := a.AddMCPServer(ctx, s.name, s.url, &agent.AddOptions{ID: s.id}); err != nil || res.State != mcpclient.StateReady {
			t.Fatalf("add %s: %+v %v", s.id, res, err)
		}
	}
	type row struct{ ID, Name, State string }
	var got []row
	for _, s := range a.Servers() {
		got = append(got, row{s.ID, s.Name, string(s.State)})
	}
	want := []row{{"docs", "Docs", "ready"}, {"search", "Search", "ready"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Servers (-want +got):\n%s", diff)
	}

	keys := func(f mcpclient.Filter) map[string]string { // key -> server id
		out := map[string]string{}
		for tool := range a.AITools(f).All() {
			out[tool.Key] = tool.ServerID
		}
		return out
	}
	all := keys(mcpclient.Filter{})
	if len(all) == 0 {
		t.Fatal("AITools lists no tool")
	}
	wantAll := map[string]string{}
	for tool := range a.Manager().AITools(mcpclient.Filter{}).All() {
		wantAll[tool.Key] = tool.ServerID
	}
	if diff := cmp.Diff(wantAll, all); diff != "" {
		t.Errorf("AITools differs from the Manager's (-manager +agent):\n%s", diff)
	}
	docs := keys(mcpclient.Filter{ServerID: []string{"docs"}})
	for k, id := range docs {
		if id != "docs" || all[k] != "docs" {
			t.Errorf("filtered AITools has %s of %s (all: %s)", k, id, all[k])
		}
	}
	if len(docs) == 0 || len(docs) == len(all) {
		t.Errorf("%d tools of docs out of %d", len(docs), len(all))
	}
}
