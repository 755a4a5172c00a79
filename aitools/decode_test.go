package aitools

import (
	"encoding/json"
	"reflect"
	"testing"
)

var decodeCases = []string{
	`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1.0`, `1e2`, `-1.5E-7`, `12345678901234567890123`, `1e999`,
	`""`, `"plain"`, `"a<b>&c"`, `"\u0041\n\t\"\\\/"`, "\"\u2028\"", `"é\u00e9"`, "\"bad \xff utf8\"", `"\ud800"`,
	` { "b" : 1 , "a" : [ 1 , { "d" : null , "c" : true } ] } `,
	`{"a":1,"a":2}`, `{"a":{"x":1},"b":0,"a":{"y":2}}`, `{"\u0061":1,"a":2}`, `[[],[{}],[[[]]]]`,
	`{"type":"object","properties":{"limit":{"type":"integer","minimum":1,"maximum":100.0,"default":30}},"required":["owner"]}`,
	`{`, `{"a"}`, `{"a":1,}`, `[1,]`, `01`, `1.`, `-`, `tru`, `"\x01"`, `{} {}`, `"abc`, `"\`, `{"a":1 "b":2}`, ``,
}

// TestDecodeJSON: decodeJSON decodes as json.Unmarshal does, and fails
// where it fails.
func TestDecodeJSON(t *testing.T) {
	for _, in := range decodeCases {
		checkDecode(t, []byte(in))
	}
}

func checkDecode(t *testing.T, in []byte) {
	t.Helper()
	var want any
	werr := json.Unmarshal(in, &want)
	got, err := decodeJSON(in)
	if (err != nil) != (werr != nil) {
		t.Fatalf("%q: error %v, json.Unmarshal's %v", in, err, werr)
	}
	if err == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: decoded %#v, want %#v", in, got, want)
	}
}

func FuzzDecodeJSON(f *testing.F) {
	for _, in := range decodeCases {
		f.Add([]byte(in))
	}
	f.Fuzz(checkDecode)
}

func BenchmarkDecodeSchema(b *testing.B) {
	raw := []byte(`{"type":"object","properties":{"owner":{"type":"string","description":"Owner of resource 7"},"name":{"type":"string","minLength":1,"maxLength":100},"limit":{"type":"integer","minimum":1,"maximum":100,"default":30},"state":{"type":"string","enum":["open","closed","all"]},"labels":{"type":"array","items":{"type":"string"}},"archived":{"type":"boolean"}},"required":["owner","name"],"additionalProperties":false}`)
	b.Run("one-pass", func(b *testing.B) {
		for b.Loop() {
			decodeJSON(raw)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			var v any
			json.Unmarshal(raw, &v)
		}
	})
}
