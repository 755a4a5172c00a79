package transport_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/mcpclient/transport"
)

// Example connects a plain go-sdk client to a streamable HTTP server over
// agentmcp's transport, with a custom header on every request, and calls a
// tool.
func Example() {
	// A test server: go-sdk's, with one tool that reads the header.
	server := mcp.NewServer(&mcp.Implementation{Name: "greeter", Version: "1.0.0"}, nil)
	type args struct {
		Name string `json:"name"`
	}
	mcp.AddTool(server, &mcp.Tool{Name: "greet", Description: "says hello"},
		func(ctx context.Context, req *mcp.CallToolRequest, in args) (*mcp.CallToolResult, any, error) {
			tenant := req.Extra.Header.Get("X-Tenant")
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: fmt.Sprintf("hello %s, from %s", in.Name, tenant)},
			}}, nil, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	defer hs.Close()

	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "1.0.0"}, nil)
	session, err := client.Connect(ctx, &transport.Streamable{
		Endpoint:       hs.URL,
		HTTPClient:     hs.Client(),
		Header:         http.Header{"X-Tenant": {"acme"}},
		MaxMessageSize: 1 << 20,
	}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer session.Close()

	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "greet", Arguments: map[string]any{"name": "Ada"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output: hello Ada, from acme
}

// ExampleWithCall passes what the caller knows about a tool call to the
// transport: the tool's name (the 2026-07-28 Mcp-Name header), and leave
// for the transport to decode the result's text items itself; go-sdk
// decodes the rest, and FillContent puts the items back.
func ExampleWithCall() {
	server := mcp.NewServer(&mcp.Implementation{Name: "logs", Version: "1.0.0"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "tail", Description: "the last log lines"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "line 1\nline 2"},
			}}, nil, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	defer hs.Close()

	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "1.0.0"}, nil)
	session, err := client.Connect(ctx, &transport.Streamable{Endpoint: hs.URL, HTTPClient: hs.Client()}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer session.Close()

	call := &transport.Call{Name: "tail", SplitText: true}
	res, err := session.CallTool(transport.WithCall(ctx, call), &mcp.CallToolParams{Name: "tail", Arguments: map[string]any{}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(res.Content), "items from go-sdk")
	call.FillContent(res)
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// 0 items from go-sdk
	// line 1
	// line 2
}
