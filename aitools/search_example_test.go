package aitools_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/aitools"
)

// Example_searchMode gives a model two meta-tools instead of a catalog:
// it searches for a tool by what it should do, then calls the tool it
// found by key.
func Example_searchMode() {
	call := func(_ context.Context, serverID, name string, args map[string]any) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s/%s called with %v", serverID, name, args)}}}, nil
	}
	path := map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}, "required": []any{"path"}}
	set := aitools.NewCache(call, nil).Build([]aitools.MCPTool{
		{ServerID: "fs", Def: &mcp.Tool{Name: "read_text_file", Description: "Read a file as text.", InputSchema: path}},
		{ServerID: "fs", Def: &mcp.Tool{Name: "create_directory", Description: "Create a new directory.", InputSchema: path}},
		{ServerID: "time", Def: &mcp.Tool{Name: "get_current_time", Description: "Get the current time in a timezone."}},
	})
	idx := aitools.NewIndex(nil)
	mode := idx.SearchMode(set, &aitools.SearchModeOptions{AlwaysLoadedServers: []string{"time"}})
	for t := range mode.All() {
		fmt.Println("offered:", t.Key)
	}

	ctx := context.Background()
	res, _ := mode.Execute(ctx, aitools.SearchToolKey, json.RawMessage(`{"query":"make a folder","limit":1}`))
	var found struct{ Tools []aitools.SearchResult }
	json.Unmarshal([]byte(aitools.ResultText(res)), &found)
	fmt.Println("found:", found.Tools[0].Key)

	res, err := mode.Execute(ctx, aitools.CallToolKey, json.RawMessage(`{"key":"tool_fs_create_directory","arguments":{"path":"/tmp/x"}}`))
	fmt.Println(aitools.ResultText(res), err)
	_, err = mode.Execute(ctx, aitools.CallToolKey, json.RawMessage(`{"key":"tool_fs_create_directory","arguments":{}}`))
	fmt.Println(err)
	// Output:
	// offered: search_tools
	// offered: call_tool
	// offered: tool_time_get_current_time
	// found: tool_fs_create_directory
	// fs/create_directory called with map[path:/tmp/x] <nil>
	// invalid arguments for tool "tool_fs_create_directory": missing property 'path'
}
