package transport

import (
	"context"
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

// TestDecodeResult: decodeResult, the decoding of a CallDirect response,
// decodes a tools/call result as go-sdk does, whether it takes its own
// path (plain text items, _meta, structuredContent, isError) or go-sdk's
// (anything else), decodes other results with encoding/json, and returns
// a JSON-RPC error as is.
func TestDecodeResult(t *testing.T) {
	id1, _ := jsonrpc.MakeID(float64(1))
	for _, result := range []string{
		`{"content":[{"type":"text","text":"hi"}]}`,
		`{"content":[{"type":"text","text":"a"},{"text":"b","type":"text"}],"isError":true,"resultType":"complete"}`,
		`{"_meta":{"k":1},"content":[{"type":"text","text":"x"}],"structuredContent":{"n":2.5,"s":["y"]}}`,
		`{"content":[],"resultType":"input_required","inputRequests":{"a":{"method":"roots/list","params":{}}},"requestState":"s"}`,
		`{"content":[{"type":"text","text":"x"}],"ttlMs":5}`,
		`{"content":[{"type":"text","text":"x"}],"IsError":true}`, // go-sdk matches keys exactly
		`{"content":[{"type":"image","data":"AA==","mimeType":"image/png"},{"type":"text","text":"y"}]}`,
		`{"content":[{"type":"text","text":"x"}],"structuredContent":"\xff"}`, // malformed
		"{\"content\":[{\"type\":\"text\",\"text\":\"x\"}],\"structuredContent\":\"\xff\"}",
		`{"content":[{"type":"text","text":"\u00e9t\u00e9"}]}`,
		`{"content":[{"type":"text","text":"x"}],"isError":null,"resultType":null,"_meta":null,"structuredContent":null}`,
		`{"content":[{"type":"text","text":"x"}],"isError":true,"isError":false}`, // twice: go-sdk's
		`{"content":[{"type":"text","text":"x"}],"_meta":{"a":1},"_meta":{"b":2}}`,
		`{"content":[{"type":"text","text":"x"}],"is\u0045rror":true}`,
		`{"content":[{"type":"text","text":"x"}],"resultType":"other"}`,
		`{"content":[{"type":"text","text":"x"}] , "structuredContent" : [1, {"a":null}] }`,
		`{"content":[{"type":"text","text":"x"}],"structuredContent":{"s":"\ud83d\ude00\ud800 \u00e9\n","e":[],"o":{},"n":-0,"f":1e-7,"a":1,"a":2}}`,
		`{"content":[{"type":"text","text":"x"}],"structuredContent":{"big":1e400}}`, // beyond float64: an error
		`{"content":[{"type":"text","text":"x"}],"structuredContent":"s","_meta":{"k":[{"\u0061":true}]}}`,
		`{"content":[{"type":"text","text":"x"}],"_meta":[1]}`, // not an object
		`{"content":[{"type":"text","text":"x"}],"_meta":"s"}`,
	} {
		var want mcp.CallToolResult
		wantErr := want.UnmarshalJSON([]byte(result))
		data := []byte(result)
		var got mcp.CallToolResult
		if err := decodeResult(&jsonrpc.Response{ID: id1, Result: data}, &got); (err != nil) != (wantErr != nil) {
			t.Errorf("%s: error %v; go-sdk's: %v", result, err, wantErr)
			continue
		} else if err != nil {
			continue
		}
		clear(data) // nothing decoded may share the response's bytes
		if diff := cmp.Diff(want, got, cmpopts.IgnoreUnexported(mcp.CallToolResult{})); diff != "" || want.NeedsInput() != got.NeedsInput() {
			t.Errorf("%s: (-go-sdk +decodeResult)\n%s", result, diff)
		}
	}

	var tools mcp.ListToolsResult
	err := decodeResult(&jsonrpc.Response{ID: id1, Result: []byte(`{"tools":[{"name":"t","inputSchema":{"type":"object"}}],"nextCursor":"c"}`)}, &tools)
	if err != nil || len(tools.Tools) != 1 || tools.Tools[0].Name != "t" || tools.NextCursor != "c" {
		t.Errorf("tools/list: %+v, %v", tools, err)
	}

	werr := &jsonrpc.Error{Code: -32602, Message: "no such tool"}
	if err := decodeResult(&jsonrpc.Response{ID: id1, Error: werr}, &mcp.CallToolResult{}); err != werr {
		t.Errorf("error response: %v; want the JSON-RPC error as is", err)
	}
}
