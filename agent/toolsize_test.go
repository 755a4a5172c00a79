package agent_test

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
)

// TestToolSize: a server's ToolBytes is the size of the JSON of the tool
// definitions it lists (counted here from a plain go-sdk client's
// tools/list), ToolTokens a quarter of it rounded up, in MCPServers and
// Server alike; a tool added (list_changed) grows it.
func TestToolSize(t *testing.T) {
	s := serve(t, mcptest.Stateful)
	ctx := testCtx(t)
	a := openAgent(t, openSQLite(t, ""), "size", nil)
	res, err := a.AddMCPServer(ctx, "s", s.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	listed := func() int {
		t.Helper()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "raw", Version: "1"}, nil).
			Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.URL}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		lr, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, tool := range lr.Tools {
			b, _ := json.Marshal(tool)
			n += len(b)
		}
		return n
	}
	want := listed()
	srv, _ := a.Server(res.ID)
	if srv.ToolBytes != want || srv.ToolTokens != (want+3)/4 || want == 0 {
		t.Errorf("Server: %d bytes, %d tokens; want %d, %d", srv.ToolBytes, srv.ToolTokens, want, (want+3)/4)
	}
	if got := a.MCPServers().Servers[res.ID]; got.ToolBytes != want {
		t.Errorf("MCPServers: %d bytes, want %d", got.ToolBytes, want)
	}

	s.srv.AddTool("another")
	want = listed()
	for {
		srv, _ = a.Server(res.ID)
		if srv.ToolBytes == want {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("after a tool was added: %d bytes, want %d", srv.ToolBytes, want)
		}
		waitBriefly(ctx)
	}
}
