package mcpclient_test

import (
	"context"
	"fmt"
	"strconv"

	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A Manager connects to a server, discovers its tools, and calls one.
func Example() {
	ctx := context.Background()
	m := mcpclient.New(nil)
	defer m.Close(ctx)

	// An in-process go-sdk server with one tool stands in for a remote
	// one; a URL or a Command works the same way.
	server := mcp.NewServer(&mcp.Implementation{Name: "demo", Version: "1.0.0"}, nil)
	type addArgs struct {
		A int `json:"a"`
		B int `json:"b"`
	}
	mcp.AddTool(server, &mcp.Tool{Name: "add", Description: "Adds two numbers."},
		func(_ context.Context, _ *mcp.CallToolRequest, in addArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strconv.Itoa(in.A + in.B)}}}, nil, nil
		})
	m.RegisterServer(ctx, "demo", mcpclient.ServerOptions{
		Name: "Demo",
		InProcess: func(context.Context, map[string]any) (*mcp.Server, error) {
			return server, nil
		},
	})
	res, _ := m.ConnectToServer(ctx, "demo")
	fmt.Println("connect:", res.State)
	d, _ := m.DiscoverIfConnected(ctx, "demo", nil)
	fmt.Println("discover:", d.State)

	for _, t := range m.ListTools(mcpclient.Filter{ServerID: []string{"demo"}}) {
		if t.Name == "add" {
			fmt.Println("tool:", t.ServerID, t.Name)
		}
	}
	out, err := m.CallTool(ctx, "demo", "add", map[string]any{"a": 2, "b": 3}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("2 + 3 =", out.Content[0].(*mcp.TextContent).Text)
	// Output:
	// connect: connected
	// discover: ready
	// tool: demo add
	// 2 + 3 = 5
}
