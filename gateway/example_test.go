package gateway_test

import (
	"context"
	"log"
	"net/http"
	"strings"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/gateway"
	"github.com/agentmcp/agentmcp/store/sqlite"
)

// An agent's MCP servers behind one MCP endpoint, with a server hidden and
// the tools that delete things refused.
func Example() {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, "agents.db", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	a, err := agent.Open(ctx, st, "assistant", "alice", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close(ctx)
	if _, err := a.AddMCPServer(ctx, "Docs", "https://mcp.example.com/mcp", &agent.AddOptions{ID: "docs"}); err != nil {
		log.Fatal(err)
	}

	g := gateway.New(a, &gateway.Options{
		Expose: func(serverID, tool string) bool {
			return serverID != "billing" && !strings.HasPrefix(tool, "delete_")
		},
	})
	defer g.Close(ctx)
	// MCP clients connect to http://127.0.0.1:8080/mcp; wrap g for
	// authentication when it listens anywhere else.
	http.Handle("/mcp", g)
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", nil))
}
