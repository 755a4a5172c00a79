package transport

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
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

// TestWholeResult: with WholeResult, a result of plain text items, _meta,
// structuredContent and isError is decoded whole into the Call and its
// response's error is ErrResultInCall; anything else goes to go-sdk.
func TestWholeResult(t *testing.T) {
	id1, _ := jsonrpc.MakeID(float64(1))
	whole := map[string]*mcp.CallToolResult{
		`{"content":[{"type":"text","text":"hi"}]}`: {Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}},
		`{"content":[{"type":"text","text":"a"},{"text":"b","type":"text"}],"isError":true,"resultType":"complete"}`: {
			Content: []mcp.Content{&mcp.TextContent{Text: "a"}, &mcp.TextContent{Text: "b"}}, IsError: true},
		`{"_meta":{"k":1},"content":[{"type":"text","text":"x"}],"structuredContent":{"n":2.5,"s":["y"]}}`: {
			Meta: mcp.Meta{"k": float64(1)}, Content: []mcp.Content{&mcp.TextContent{Text: "x"}},
			StructuredContent: map[string]any{"n": 2.5, "s": []any{"y"}}},
	}
	for result, want := range whole {
		c := &Call{SplitText: true, WholeResult: true}
		resp := c.take(&jsonrpc.Response{ID: id1, Result: json.RawMessage(result)})
		if resp.Error != ErrResultInCall || resp.Result != nil {
			t.Errorf("%s: response %+v; want ErrResultInCall", result, resp)
			continue
		}
		if diff := cmp.Diff(want, c.Result(), cmpopts.IgnoreUnexported(mcp.CallToolResult{})); diff != "" {
			t.Errorf("%s: (-want +got)\n%s", result, diff)
		}
		if c.Result() != nil {
			t.Errorf("%s: Result kept after it was taken", result)
		}
	}
	for _, result := range []string{
		`{"content":[{"type":"text","text":"x"}],"resultType":"input_required","inputRequests":{}}`,
		`{"content":[{"type":"text","text":"x"}],"ttlMs":5}`,
		`{"content":[{"type":"text","text":"x"}],"IsError":true}`, // go-sdk matches keys exactly
		`{"content":[{"type":"image","data":"AA==","mimeType":"image/png"}]}`,
		`{"content":[{"type":"text","text":"x"}],"structuredContent":"\xff"}`,
	} {
		c := &Call{SplitText: true, WholeResult: true}
		resp := c.take(&jsonrpc.Response{ID: id1, Result: json.RawMessage(result)})
		if resp.Error != nil || c.Result() != nil {
			t.Errorf("%s: decoded whole (%+v); want it left to go-sdk", result, resp)
		}
	}
	// Without WholeResult, the text is only split out.
	c := &Call{SplitText: true}
	if resp := c.take(&jsonrpc.Response{ID: id1, Result: json.RawMessage(`{"content":[{"type":"text","text":"hi"}]}`)}); resp.Error != nil || c.Result() != nil {
		t.Errorf("without WholeResult: %+v", resp)
	}
}
