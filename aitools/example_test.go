package aitools_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/aitools"
)

// Example builds a ToolSet from a catalog with two troublesome entries
// (a name providers reject, two servers whose ids differ only by "-"),
// and executes calls: one valid, one that the schema refuses before it
// reaches the server. The hashed keys are pinned: they must never change
// from one release to the next.
func Example() {
	call := func(_ context.Context, serverID, name string, args map[string]any) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s/%s called with %v", serverID, name, args)}}}, nil
	}
	schema := json.RawMessage(`{"type":"object","properties":{"amount":{"type":"integer"}},"required":["amount"]}`)
	cache := aitools.NewCache(call, nil)
	set := cache.Build([]aitools.MCPTool{
		{ServerID: "server-1", Def: &mcp.Tool{Name: "create_charge", InputSchema: schema}},
		{ServerID: "files", Def: &mcp.Tool{Name: "fs.read"}},
		{ServerID: "my-server", Def: &mcp.Tool{Name: "search"}},
		{ServerID: "myserver", Def: &mcp.Tool{Name: "search"}},
	})
	for t := range set.All() {
		fmt.Println(t.Key)
	}
	for _, c := range set.Collisions() {
		fmt.Println("collision:", c.Key)
	}

	ctx := context.Background()
	res, err := set.Execute(ctx, "tool_server1_create_charge", json.RawMessage(`{"amount": 5}`))
	fmt.Println(aitools.ResultText(res), err)
	_, err = set.Execute(ctx, "tool_server1_create_charge", json.RawMessage(`{"amount": "5"}`))
	fmt.Println(err)
	// Output:
	// tool_server1_create_charge
	// tool_files_fs_read_ada9233e
	// tool_my-server_search_b918d50e
	// tool_myserver_search_2799a118
	// collision: tool_myserver_search
	// server-1/create_charge called with map[amount:5] <nil>
	// invalid arguments for tool "tool_server1_create_charge": argument "amount": got string, want integer
}
