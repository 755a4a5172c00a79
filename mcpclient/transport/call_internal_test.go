package transport

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkModernHeaders measures the headers of one 2026-07-28 tools/call
// of a tool with 20 properties, one of them bound to a header: the
// bindings are found again on every call.
func BenchmarkModernHeaders(b *testing.B) {
	props := map[string]any{"key": map[string]any{"type": "string", "x-mcp-header": "Key"}}
	for i := range 19 {
		props[fmt.Sprintf("p%d", i)] = map[string]any{"type": "string", "description": "a property"}
	}
	tool := &mcp.Tool{Name: "t", InputSchema: map[string]any{"type": "object", "properties": props}}
	ctx := WithCall(context.Background(), &Call{Name: "t", Tool: tool})
	call := &jsonrpc.Request{Method: "tools/call", Params: []byte(`{"name":"t","arguments":{"key":"k","p1":"x"}}`)}
	b.ReportAllocs()
	for b.Loop() {
		h := http.Header{headerProtocolVersion: {ProtocolModern}}
		setModernHeaders(ctx, h, call)
		if h.Get("Mcp-Param-Key") != "k" {
			b.Fatal(h)
		}
	}
}
