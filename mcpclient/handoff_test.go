package mcpclient

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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
