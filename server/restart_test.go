package server

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/api/client"
)

// TestRestart: a server stopped and started again on the same database
// shows the same agents and servers, reconnected.
func TestRestart(t *testing.T) {
	t.Parallel()
	_, url1 := mcpServer(t, "one")
	_, url2 := mcpServer(t, "two")
	ctx := testCtx(t)

	e := newEnv(t, nil)
	if _, err := e.client("test", "a").AddMCPServer(ctx, api.AddRequest{Name: "one", URL: url1, ID: "one"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client("test", "a").AddMCPServer(ctx, api.AddRequest{Name: "two", URL: url2}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client("other", "b").AddMCPServer(ctx, api.AddRequest{Name: "one", URL: url1, ID: "x"}); err != nil {
		t.Fatal(err)
	}
	// An agent with no servers is not restored.
	if err := e.client("empty", "c").CreateAgent(ctx); err != nil {
		t.Fatal(err)
	}
	before, err := e.client("test", "a").MCPServers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e.stop()

	e2 := openEnv(t, e.path, nil)
	if got := e2.srv.Agents(); len(got) != 0 {
		t.Errorf("agents awake after the restart: %v (they wake on their first request)", got)
	}
	agents, err := client.ListAgents(ctx, e2.ts.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]api.AgentInfo{{Class: "agentmcp", Name: "default"}, {Class: "test", Name: "a"}, {Class: "other", Name: "b"}}, agents); diff != "" {
		t.Errorf("agents after the restart (-want +got):\n%s", diff)
	}
	for _, name := range [][2]string{{"test", "a"}, {"other", "b"}} {
		a, release, err := e2.srv.Use(ctx, name[0], name[1])
		if err != nil {
			t.Fatal(err)
		}
		a.WaitForConnections(ctx)
		release()
	}
	after, err := e2.client("test", "a").MCPServers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ids := func(st api.MCPServersState) []string {
		var out []string
		for id, s := range st.Servers {
			if s.State != "ready" {
				t.Errorf("server %s is %s after the restart (error %v)", id, s.State, s.Error)
			}
			out = append(out, id+"="+s.Name)
		}
		slices.Sort(out)
		return out
	}
	if diff := cmp.Diff(ids(before), ids(after)); diff != "" {
		t.Errorf("servers after the restart (-before +after):\n%s", diff)
	}
	if len(after.Tools) != len(before.Tools) || len(after.Tools) == 0 {
		t.Errorf("%d tools after the restart, %d before", len(after.Tools), len(before.Tools))
	}
	res, err := e2.client("test", "a").CallTool(ctx, "one", "echo", map[string]string{"text": "again"})
	if err != nil || toolResult(t, res).Content[0].(*mcp.TextContent).Text != "echo: again" {
		t.Fatalf("call after the restart: %+v %v", res, err)
	}
	st, err := e2.client("other", "b").MCPServers(ctx)
	if err != nil || st.Servers["x"].State != "ready" {
		t.Errorf("other/b after the restart: %+v %v", st, err)
	}
}
