package agent_test

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/policy"
)

// TestAppOnlyToolsKeptFromTheModel: a tool its server meant for views
// alone (_meta.ui.visibility ["app"]) is left out of the agent's own
// LLM's tools, and kept in the gateway's (an editor hosts the views);
// tools the model may see stay.
func TestAppOnlyToolsKeptFromTheModel(t *testing.T) {
	srv := mcptest.NewAppsServer("apps", "<p>view</p>", nil)
	hs := mcptest.Serve(t, mcptest.Stateless, func() *mcp.Server { return srv.Server })
	a := openAgent(t, openSQLite(t, ""), "apps", nil)
	if _, err := a.AddMCPServer(testCtx(t), "S", hs.URL, &agent.AddOptions{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	if inSet(a, policy.LLM, "viewonly") {
		t.Error("the LLM's tools include viewonly, a tool for views alone")
	}
	for _, name := range []string{"show", "second", "hidden"} {
		if !inSet(a, policy.LLM, name) {
			t.Errorf("the LLM's tools lack %s", name)
		}
	}
	if !inSet(a, policy.Gateway, "viewonly") {
		t.Error("the gateway's tools lack viewonly")
	}
}
