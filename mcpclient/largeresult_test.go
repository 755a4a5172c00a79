package mcpclient_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// largeServer is mcptest's server plus tools with large results: "text"
// (64 KiB of lines), "mixed" (text and an image), "structured" (text,
// structured content and isError), and "refused" (short texts and isError).
func largeServer() *mcptest.Server {
	s := mcptest.NewServer("large")
	text := strings.Repeat("a line of log output, \"quoted\", tab\there é ✓\n", 1500)
	type empty struct{}
	mcp.AddTool(s.Server, &mcp.Tool{Name: "text"}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}, &mcp.TextContent{Text: "second"}}}, nil, nil
	})
	mcp.AddTool(s.Server, &mcp.Tool{Name: "mixed"}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text},
			&mcp.ImageContent{MIMEType: "image/png", Data: []byte(base64.StdEncoding.EncodeToString([]byte("png")))}}}, nil, nil
	})
	mcp.AddTool(s.Server, &mcp.Tool{Name: "structured"}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{IsError: true, Meta: mcp.Meta{"k": "v"},
			Content:           []mcp.Content{&mcp.TextContent{Text: text}},
			StructuredContent: map[string]any{"lines": 1500.0, "ok": false}}, nil, nil
	})
	mcp.AddTool(s.Server, &mcp.Tool{Name: "refused"}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no"}, &mcp.TextContent{Text: "tab\tquote\""}}}, nil, nil
	})
	return s
}

// TestLargeResults checks that large results reach the caller of
// Manager.CallTool as go-sdk's own session decodes them, in both eras, with
// event-stream and JSON responses, on both transport implementations.
func TestLargeResults(t *testing.T) {
	for _, tt := range []struct {
		name string
		mode mcptest.Mode
		json bool
		pin  string
	}{
		{"2026-07-28 event stream", mcptest.Stateless, false, "2026-07-28"},
		{"2026-07-28 JSON", mcptest.Stateless, true, "2026-07-28"},
		{"2025-11-25 event stream", mcptest.Stateful, false, "2025-11-25"},
		{"2025-11-25 JSON", mcptest.Stateful, true, "2025-11-25"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := largeServer()
			get := func(*http.Request) *mcp.Server { return srv.Server }
			hs := mcptest.ServeHandler(t, mcp.NewStreamableHTTPHandler(get,
				&mcp.StreamableHTTPOptions{Stateless: tt.mode == mcptest.Stateless, JSONResponse: tt.json}))
			t.Cleanup(func() {
				for ss := range srv.Sessions() {
					ss.Close()
				}
			})
			ctx := testCtx(t)
			raw, err := mcp.NewClient(&mcp.Implementation{Name: "raw", Version: "1"}, nil).
				Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hs.URL}, &mcp.ClientSessionOptions{ProtocolVersion: tt.pin})
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			m := newManager(t, nil)
			for _, impl := range []mcpclient.TransportImplementation{mcpclient.ImplementationAgentMCP, mcpclient.ImplementationGoSDK} {
				connectReady(t, m, string(impl), mcpclient.ServerOptions{URL: hs.URL,
					Transport: mcpclient.TransportOptions{Type: mcpclient.TransportStreamableHTTP, Implementation: impl},
					Client:    mcpclient.ClientOptions{ProtocolVersion: tt.pin}})
			}
			for _, tool := range []string{"text", "mixed", "structured", "echo", "refused"} {
				want, err := raw.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"text": "x"}})
				if err != nil {
					t.Fatal(err)
				}
				for _, impl := range []mcpclient.TransportImplementation{mcpclient.ImplementationAgentMCP, mcpclient.ImplementationGoSDK} {
					got, err := m.CallTool(ctx, string(impl), tool, map[string]any{"text": "x"}, nil)
					if err != nil {
						t.Fatalf("%s on %s: %v", tool, impl, err)
					}
					// The Manager's direct path (transport.DirectCaller)
					// leaves the unexported result type empty where go-sdk
					// reads "complete": the same to go-sdk ("empty or
					// complete means the call succeeded"), and to its one
					// exported reader, NeedsInput.
					if diff := cmp.Diff(want, got, cmpopts.IgnoreUnexported(mcp.CallToolResult{})); diff != "" || want.NeedsInput() != got.NeedsInput() {
						t.Errorf("%s on %s: result differs from go-sdk's session (-want +got):\n%s", tool, impl, diff)
					}
				}
			}
		})
	}
}
