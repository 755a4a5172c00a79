package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// handoffCorpus are tools/call results, for the differential tests of
// splitTextContent against go-sdk's decoding.
var handoffCorpus = []string{
	`{"content":[{"type":"text","text":"TEXT"}]}`,
	`{"content":[{"text":"TEXT","type":"text"},{"type":"text","text":"second \"quoted\" \\ \/ \b\f\n\r\t é ✓"}],"isError":true}`,
	`{"_meta":{"k":[1,"x",null]},"content":[{"type":"text","text":"TEXT"}],"structuredContent":{"a":1.5,"b":[true,false]},"resultType":"complete"}`,
	`{"content":[{"type":"text","text":"TEXT"}],"unknownField":{"x":"y"}}`,
	` { "content" : [ { "type" : "text" , "text" : "TEXT" } ] } `,
	// Left to go-sdk.
	`{"content":[{"type":"text","text":"TEXT","annotations":{"priority":1}}]}`,
	`{"content":[{"type":"text","text":"TEXT","_meta":{}}]}`,
	`{"content":[{"type":"text","text":"TEXT \u00e9"}]}`,
	`{"content":[{"type":"text","text":"TEXT"},{"type":"image","data":"aGk=","mimeType":"image/png"}]}`,
	`{"content":[{"type":"text","text":"TEXT"}],"content":[]}`,
	`{"content":[{"type":"text","type":"text","text":"TEXT"}]}`,
	`{"content":[]}`,
	`{"content":null}`,
	`{"content":{"type":"text","text":"TEXT"}}`,
	`{"content":[{"type":"text"}]}`,
	`{"content":[{"type":"Text","text":"TEXT"}]}`,
	`{"structuredContent":{}}`,
	`{"content":[{"type":"text","text":"TEXT"}]`,
	`[]`,
}

// expand makes the text of a corpus entry long enough to be handed off.
func expand(s string) string {
	return strings.ReplaceAll(s, "TEXT", strings.Repeat("line of text\\n", 400))
}

// sdkDecode decodes a result the way go-sdk does, for comparison.
func sdkDecode(t testing.TB, data []byte) (*mcp.CallToolResult, bool) {
	var r mcp.CallToolResult
	if err := r.UnmarshalJSON(data); err != nil {
		return nil, false
	}
	return &r, true
}

// checkSplit checks that what splitTextContent decodes, go-sdk decodes the
// same, and that go-sdk's decoding of the rest plus that content is
// go-sdk's decoding of the whole.
func checkSplit(t *testing.T, in []byte, minText int) (handed bool) {
	t.Helper()
	if !json.Valid(in) {
		return false // decodeMessage checked it before splitTextContent sees it
	}
	content, rest, ok := splitTextContent(in, minText)
	if !ok {
		return false
	}
	want, wok := sdkDecode(t, in)
	if !wok {
		t.Fatalf("splitTextContent took %q, which go-sdk refuses", in)
	}
	got, gok := sdkDecode(t, rest)
	if !gok {
		t.Fatalf("go-sdk refuses the rest %q of %q", rest, in)
	}
	got.Content = content
	// Compare through JSON (CallToolResult has unexported fields) and the
	// content values themselves.
	wj, _ := json.Marshal(want)
	gj, _ := json.Marshal(got)
	if diff := cmp.Diff(string(wj), string(gj)); diff != "" {
		t.Errorf("splitTextContent(%.100q) differs from go-sdk (-want +got):\n%s", in, diff)
	}
	if diff := cmp.Diff(want.Content, got.Content); diff != "" {
		t.Errorf("content of %.100q differs from go-sdk (-want +got):\n%s", in, diff)
	}
	return true
}

func TestSplitTextContent(t *testing.T) {
	for i, in := range handoffCorpus {
		handed := checkSplit(t, []byte(expand(in)), minHandoffText)
		if want := i < 5; handed != want {
			t.Errorf("splitTextContent(%.80q) handed off = %v, want %v", in, handed, want)
		}
	}
	// Below the threshold, go-sdk decodes it all.
	if _, _, ok := splitTextContent([]byte(handoffCorpus[0]), minHandoffText); ok {
		t.Errorf("a short text was handed off")
	}
}

func FuzzSplitTextContent(f *testing.F) {
	for _, in := range handoffCorpus {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		checkSplit(t, []byte(in), 0)
	})
}

// simpleCorpus are results for simpleToolResult: the first ones it decodes,
// then ones it leaves to go-sdk.
var simpleCorpus = []string{
	`{"content":[{"type":"text","text":"hi"}]}`,
	`{"content":[{"type":"text","text":"a"},{"text":"b \"q\" \\ \/ \n é","type":"text"}],"isError":true}`,
	`{"resultType":"complete","isError":false,"content":[{"type":"text","text":""}]}`,
	" {\n\"content\" : [ {\"type\":\"text\" , \"text\":\"x\"} ] ,\t\"isError\" : false } ",
	`{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"p","version":"1.0.0"}},"content":[{"type":"text","text":"echo: hi"}],"resultType":"complete"}`,
	`{"content":[{"type":"text","text":"hi"}],"structuredContent":{"a":1,"b":[true,null,-0,1e3,"s"],"c":{}},"_meta":{}}`,
	`{"content":[{"type":"text","text":"hi"}],"structuredContent":null}`,
	`{"content":[{"type":"text","text":"hi"}],"structuredContent":"text"}`,
	`{"content":[{"type":"text","text":"hi"}],"structuredContent":{"a":1,"a":{"b":2},"n":123456789012345678901234567890,"f":1.5e-7,"e":"","s":"\"\\\/\b\f\n\r\t é"}}`,
	// Left to go-sdk.
	`{"content":[{"type":"text","text":"hi"}],"_meta":null}`,
	`{"content":[{"type":"text","text":"hi"}],"_meta":[]}`,
	`{"content":[{"type":"text","text":"hi"}],"_meta":{"k":"\u00e9"}}`,
	`{"content":[{"type":"text","text":"hi"}],"structuredContent":1,"structuredContent":2}`,
	`{"content":[{"type":"text","text":"hi"}],"resultType":"input_required","inputRequests":{}}`,
	`{"content":[{"type":"text","text":"hi"}],"isError":null}`,
	`{"content":[{"type":"text","text":"hi"}],"isError":true,"isError":false}`,
	`{"content":[{"type":"text","text":"hi"}],"resultType":"complete","resultType":"complete"}`,
	`{"content":[{"type":"text","text":"hi"}],"unknown":1}`,
	`{"content":[{"type":"text","text":"\u0041"}]}`,
	`{"content":[]}`,
	`{"isError":false}`,
	`{"Content":[{"type":"text","text":"hi"}]}`,
	`{"content":[{"type":"image","data":"aGk=","mimeType":"image/png"}]}`,
}

// checkSimple checks that what simpleToolResult decodes, go-sdk decodes the
// same, unexported fields and re-encoding included.
func checkSimple(t *testing.T, in []byte) (decoded bool) {
	t.Helper()
	if !json.Valid(in) {
		return false // decodeMessage checked it before simpleToolResult sees it
	}
	got, ok := simpleToolResult(in)
	if !ok {
		return false
	}
	want, wok := sdkDecode(t, in)
	if !wok {
		t.Fatalf("simpleToolResult took %q, which go-sdk refuses", in)
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(mcp.CallToolResult{})); diff != "" {
		t.Errorf("simpleToolResult(%.100q) differs from go-sdk (-want +got):\n%s", in, diff)
	}
	wj, _ := json.Marshal(want)
	gj, _ := json.Marshal(got)
	if string(wj) != string(gj) {
		t.Errorf("simpleToolResult(%.100q) re-encodes as %s, go-sdk's as %s", in, gj, wj)
	}
	return true
}

func TestSimpleToolResult(t *testing.T) {
	for i, in := range simpleCorpus {
		if got, want := checkSimple(t, []byte(in)), i < 9; got != want {
			t.Errorf("simpleToolResult(%q) decoded = %v, want %v", in, got, want)
		}
	}
}

func FuzzSimpleToolResult(f *testing.F) {
	for _, in := range append(simpleCorpus, handoffCorpus...) {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		checkSimple(t, []byte(in))
	})
}

// TestTakeWholeResult checks that take hands a simple result up whole, as
// the error of its response, and that decodedResults turns it back.
func TestTakeWholeResult(t *testing.T) {
	id, _ := jsonrpc.MakeID(float64(7))
	resp := (new(handoff)).take(&jsonrpc.Response{ID: id, Result: json.RawMessage(simpleCorpus[0])})
	var d *decodedResult
	if resp.Result != nil || !errors.As(resp.Error, &d) {
		t.Fatalf("take(%s) = %+v, want the result decoded whole", simpleCorpus[0], resp)
	}
	handler := decodedResults(func(context.Context, string, mcp.Request) (mcp.Result, error) {
		return nil, fmt.Errorf("calling %q: %w", "tools/call", resp.Error)
	})
	res, err := handler(t.Context(), "tools/call", nil)
	if err != nil || res != d.res {
		t.Fatalf("decodedResults = %v, %v; want the decoded result", res, err)
	}
	// Not for a call without a handoff (not Manager.CallTool's), nor for an
	// error response.
	if r := (*handoff)(nil).take(&jsonrpc.Response{ID: id, Result: json.RawMessage(simpleCorpus[0])}); r.Error != nil {
		t.Errorf("take without a handoff decoded the result")
	}
}
