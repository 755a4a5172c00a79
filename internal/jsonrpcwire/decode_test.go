package jsonrpcwire

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// wireCorpus are JSON-RPC messages, good and bad, for the differential
// tests of decodeMessage against go-sdk's jsonrpc.DecodeMessage.
var wireCorpus = []string{
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}`,
	`{"jsonrpc":"2.0","id":"abc","result":{}}`,
	`{"jsonrpc":"2.0","id":"a\"b\u00e9","result":[1,2.5,-3e+2,true,false,null,"x"]}`,
	`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"}}`,
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`,
	`{"jsonrpc":"2.0","method":"","params":null}`,
	`{"jsonrpc":"2.0","method":null}`,
	`{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"nope","data":{"a":1}}}`,
	`{"jsonrpc":"2.0","id":3,"error":null,"result":1}`,
	`{"jsonrpc":"2.0","id":3,"result":1,"error":{"code":1,"message":"both"}}`,
	` { "jsonrpc" : "2.0" , "id" : 4.9 , "result" : { "a" : [ ] , "b" : { } } } `,
	`{"jsonrpc":"2.0","id":-0,"result":0}`,
	`{"jsonrpc":"2.0","id":12345678901,"result":"\ud83d\ude00 \\ \/ \b\f\n\r\t"}`,
	`{"jsonrpc":"2.0","id":1,"extra":{"deep":[[[{}]]]},"result":null}`,
	`{"jsonr\u0070c":"2.0","id":1,"result":2}`,
	`{"jsonrpc":"2.0","id":1,"result":"é ✓ \u2028"}`,
	`{"jsonrpc":"2.0","id":1,"id":2,"result":1}`,
	// Invalid.
	`{"jsonrpc":"2.0","result":1}`,
	`{"jsonrpc":"2.0","id":null,"result":1}`,
	`{"jsonrpc":"1.0","id":1,"result":1}`,
	`{"id":1,"result":1}`,
	`{"jsonrpc":2,"id":1,"result":1}`,
	`{"jsonrpc":"2.0","id":true,"result":1}`,
	`{"jsonrpc":"2.0","id":{},"result":1}`,
	`{"jsonrpc":"2.0","id":1,"method":5}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[`,
	`{not json`,
	`[]`,
	`null`,
	``,
	`{"jsonrpc":"2.0","id":1,"result":01}`,
	`{"jsonrpc":"2.0","id":1,"result":1.}`,
	`{"jsonrpc":"2.0","id":1,"result":"a` + "\x01" + `"}`,
	`{"jsonrpc":"2.0","id":1,"result":"\x"}`,
	`{"jsonrpc":"2.0","id":1,"result":"\u12"}`,
	`{"jsonrpc":"2.0","id":1,"result":tru}`,
	`{"jsonrpc":"2.0","id":1,"result":[1,]}`,
	`{"jsonrpc":"2.0","id":1,"result":{"a":1,}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"a" 1}}`,
	`{"jsonrpc":"2.0","id":1,"result":1,}`,
	`{"jsonrpc":"2.0","id":1,"result":` + strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + `}`,
}

// describe renders a decoded message, or the fact of an error, for
// comparison (error texts differ between the decoders).
func describe(msg jsonrpc.Message, err error) string {
	if err != nil {
		return "error"
	}
	switch m := msg.(type) {
	case *jsonrpc.Request:
		return "request " + jsonOf(m.ID.Raw()) + " " + m.Method + " " + compact(m.Params)
	case *jsonrpc.Response:
		e := "<nil>"
		if m.Error != nil {
			e = jsonOf(m.Error)
		}
		return "response " + jsonOf(m.ID.Raw()) + " " + compact(m.Result) + " " + e
	}
	return "?"
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// compact is the raw value as sent, or <nil>.
func compact(raw json.RawMessage) string {
	if raw == nil {
		return "<nil>"
	}
	return string(raw)
}

func TestDecodeMessage(t *testing.T) {
	for _, in := range wireCorpus {
		want := describe(jsonrpc.DecodeMessage([]byte(in)))
		got := describe(Decode([]byte(in)))
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Decode(%.80q) differs from jsonrpc.DecodeMessage (-want +got):\n%s", in, diff)
		}
	}
}

func TestDecodeMessageLarge(t *testing.T) {
	text := strings.Repeat("0123456789 abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ\\n\\t\\\"é✓", 2000)
	in := `{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"` + text + `"}]}}`
	want := describe(jsonrpc.DecodeMessage([]byte(in)))
	got := describe(Decode([]byte(in)))
	if want != got {
		t.Errorf("large message decodes differently")
	}
}

// FuzzDecodeMessage checks that decodeMessage accepts exactly what go-sdk's
// decoder accepts (apart from bytes after the message, which go-sdk
// ignores and decodeMessage refuses), with the same result.
func FuzzDecodeMessage(f *testing.F) {
	for _, in := range wireCorpus {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		wantMsg, wantErr := jsonrpc.DecodeMessage([]byte(in))
		gotMsg, gotErr := Decode([]byte(in))
		want, got := describe(wantMsg, wantErr), describe(gotMsg, gotErr)
		if want == got {
			return
		}
		if gotErr != nil && wantErr == nil && !json.Valid([]byte(in)) {
			return // trailing bytes, which go-sdk ignores
		}
		t.Errorf("Decode(%q) = %s; jsonrpc.DecodeMessage: %s", in, got, want)
	})
}
