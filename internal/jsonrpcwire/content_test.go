package jsonrpcwire

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// splitCorpus are tools/call results, for the differential tests of
// SplitText against go-sdk's decoding: the first five it splits (their
// text expanded), then ones it leaves to go-sdk.
var splitCorpus = []string{
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

// checkSplit checks that what SplitText decodes, go-sdk decodes the
// same, and that go-sdk's decoding of the rest plus that content is
// go-sdk's decoding of the whole, unexported fields included; and that
// go-sdk refuses the rest exactly when it refuses the whole (a result
// whose other fields are wrong still fails its call).
func checkSplit(t *testing.T, in []byte, minText int) (handed bool) {
	t.Helper()
	content, rest, ok := SplitText(in, minText)
	if !ok {
		return false
	}
	want, wok := sdkDecode(t, in)
	got, gok := sdkDecode(t, rest)
	if wok != gok {
		t.Fatalf("go-sdk decodes the whole of %q: %v, the rest %q: %v", in, wok, rest, gok)
	}
	if !wok {
		return true
	}
	got.Content = content
	// Compare through JSON (CallToolResult has unexported fields) and the
	// content values themselves.
	wj, _ := json.Marshal(want)
	gj, _ := json.Marshal(got)
	if diff := cmp.Diff(string(wj), string(gj)); diff != "" {
		t.Errorf("SplitText(%.100q) differs from go-sdk (-want +got):\n%s", in, diff)
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(mcp.CallToolResult{})); diff != "" {
		t.Errorf("content of %.100q differs from go-sdk (-want +got):\n%s", in, diff)
	}
	return true
}

func TestSplitText(t *testing.T) {
	for i, in := range splitCorpus {
		handed := checkSplit(t, []byte(expand(in)), 4<<10)
		if want := i < 5; handed != want {
			t.Errorf("SplitText(%.80q) handed off = %v, want %v", in, handed, want)
		}
	}
	// Below the threshold, go-sdk decodes it all.
	if _, _, ok := SplitText([]byte(splitCorpus[0]), 4<<10); ok {
		t.Errorf("a short text was handed off")
	}
}

// TestSplitTextSmall: without a threshold, every result of plain text
// items is split, whatever else it holds, and go-sdk decodes the rest.
func TestSplitTextSmall(t *testing.T) {
	for i, in := range smallCorpus {
		if got, want := checkSplit(t, []byte(in), 0), i < 11; got != want {
			t.Errorf("SplitText(%q) split = %v, want %v", in, got, want)
		}
	}
}

func FuzzSplitText(f *testing.F) {
	for _, in := range append(splitCorpus, smallCorpus...) {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if !json.Valid([]byte(in)) {
			return // SplitText takes what DecodeShared validated
		}
		checkSplit(t, []byte(in), 0)
	})
}

// smallCorpus are small results: the first ones SplitText splits, then
// ones it leaves to go-sdk.
var smallCorpus = []string{
	`{"content":[{"type":"text","text":"hi"}]}`,
	`{"content":[{"type":"text","text":"a"},{"text":"b \"q\" \\ \/ \n é","type":"text"}],"isError":true}`,
	`{"resultType":"complete","isError":false,"content":[{"type":"text","text":""}]}`,
	" {\n\"content\" : [ {\"type\":\"text\" , \"text\":\"x\"} ] ,\t\"isError\" : false } ",
	`{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"p","version":"1.0.0"}},"content":[{"type":"text","text":"echo: hi"}],"resultType":"complete"}`,
	`{"content":[{"type":"text","text":"hi"}],"structuredContent":{"a":1,"b":[true,null,-0,1e3,"s"],"c":{}},"_meta":{}}`,
	`{"content":[{"type":"text","text":"hi"}],"resultType":"input_required","inputRequests":{}}`,
	`{"content":[{"type":"text","text":"hi"}],"unknown":1}`,
	`{"content":[{"type":"text","text":"hi"}],"_meta":{"k":"\u00e9"}}`,
	// Backslash runs before quotes: escaped, then closing.
	`{"content":[{"type":"text","text":"a\\\\"},{"type":"text","text":"\\\"x\\\\\\\"\\"}]}`,
	`{"content":[{"text":"\"\"\\","type":"text"}]}`,
	// Left to go-sdk.
	`{"content":[{"type":"text","text":"\u0041"}]}`,
	`{"content":[]}`,
	`{"isError":false}`,
	`{"Content":[{"type":"text","text":"hi"}]}`,
	`{"c\u006fntent":[{"type":"text","text":"hi"}]}`,
	`{"content":[{"type":"image","data":"aGk=","mimeType":"image/png"}]}`,
	`{"content":[{"type":"text","text":"hi"}],"x":tru}`,
	`{"content":[{"type":"text","text":"hi"}]} x`,
}

// TestMembers: Members hands each member's exact key and raw value, in
// order, and refuses escaped keys and malformed or trailing input.
func TestMembers(t *testing.T) {
	var got []string
	err := Members([]byte(` {"a":1, "b" : {"c":[true]},"a":"x"} `), func(key, value []byte) error {
		got = append(got, string(key)+"="+string(value))
		return nil
	})
	if want := []string{"a=1", `b={"c":[true]}`, `a="x"`}; err != nil || !slices.Equal(got, want) {
		t.Errorf("Members = %q, %v; want %q", got, err, want)
	}
	for _, bad := range []string{`{"\u0061":1}`, `{"a":1} x`, `{"a":}`, `[1]`, ``} {
		if err := Members([]byte(bad), func(key, value []byte) error { return nil }); err == nil {
			t.Errorf("Members(%s) accepted it", bad)
		}
	}
}
