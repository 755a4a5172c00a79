package jsonrpcwire

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdJSON is what go-sdk's jsonrpc2 writes for v: encoding/json's
// Encoder, HTML not escaped, without the newline.
func stdJSON(v any) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return strings.TrimSuffix(buf.String(), "\n"), err
}

// checkEncode compares enc's encoding of v with encoding/json's: the same
// bytes, or both an error.
func checkEncode(t *testing.T, name string, v any, enc func([]byte, any) ([]byte, error)) {
	t.Helper()
	want, wantErr := stdJSON(v)
	got, gotErr := enc([]byte("prefix"), v)
	switch {
	case (wantErr != nil) != (gotErr != nil):
		t.Errorf("%s: error %v; encoding/json: %v", name, gotErr, wantErr)
	case wantErr == nil && string(got) != "prefix"+want:
		t.Errorf("%s:\n got %s\nwant prefix%s", name, got, want)
	}
}

// encodeStrings are strings with everything encoding/json escapes.
var encodeStrings = []string{
	"", "hello", `a"b\c/d`, "\x00\x01\x1f\x7f\b\f\n\r\t", "<&>", "é✓😀",
	"\u2028\u2029x\u2027\u202a", "\xff", "a\xc3", "\xed\xa0\x80", "\xf4\x90\x80\x80", "a\xe2\x80",
	strings.Repeat("x\u2028\xfe", 40),
}

// encodeValues are values of every shape AppendJSON writes itself and
// some it leaves to encoding/json.
func encodeValues() map[string]any {
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	deep := any("leaf")
	for range maxEncodeDepth + 20 {
		deep = []any{map[string]any{"d": deep}}
	}
	type point struct{ X, Y int }
	vals := map[string]any{
		"nil": nil, "true": true, "false": false,
		"int": -42, "int8": int8(-8), "int16": int16(300), "int32": int32(-1 << 31), "int64": int64(math.MinInt64),
		"uint": uint(7), "uint8": uint8(255), "uint16": uint16(65535), "uint32": uint32(1 << 31), "uint64": uint64(math.MaxUint64),
		"map":        map[string]any{"b": 1.0, "a": "x", "": nil, "é": []any{}, "A": map[string]any{}, "z\u2028": true},
		"map nil":    map[string]any(nil),
		"meta":       mcp.Meta{"progressToken": "t", "k": 1.5},
		"meta nil":   mcp.Meta(nil),
		"slice":      []any{1.0, "two", nil, false, []any{map[string]any{"x": math.Copysign(0, -1)}}},
		"slice nil":  []any(nil),
		"many keys":  manyKeys(40),
		"raw":        json.RawMessage(`{"a": [1, 2 ,"x y"] , "b":"<\u003c>"}`),
		"raw plain":  json.RawMessage(`[1,"2"]`),
		"raw nil":    json.RawMessage(nil),
		"raw empty":  json.RawMessage{},
		"raw bad":    json.RawMessage(`{"a":`),
		"raw in map": map[string]any{"r": json.RawMessage(" 5 ")},
		"number":     json.Number("-12.5e+3"),
		"number 0":   json.Number(""),
		"number bad": json.Number("01"),
		"number hex": json.Number("0x10"),
		"NaN":        math.NaN(),
		"Inf in map": map[string]any{"x": math.Inf(-1)},
		"float32Inf": float32(math.Inf(1)),
		"struct":     point{1, 2},
		"strings":    []string{"a", "<b>"},
		"bytes":      []byte("hi"),
		"map int":    map[string]int{"b": 2, "a": 1},
		"ptr":        &point{3, 4},
		"cyclic":     cyclic,
		"deep":       deep,
		"impl":       &mcp.Implementation{Name: "agentmcp", Version: "1.2.3"},
		"impl full":  &mcp.Implementation{Name: "n\u2028", Title: "t", Description: "d<>", Version: "v", WebsiteURL: "https://x.example/?a=1&b=2"},
		"impl icons": &mcp.Implementation{Name: "n", Version: "v", Icons: []mcp.Icon{{Source: "data:x", Sizes: []string{"48x48"}}}},
		"impl nil":   (*mcp.Implementation)(nil),
		"impl value": mcp.Implementation{Name: "n", Version: "v"},
	}
	for i, s := range encodeStrings {
		vals["string "+string(rune('a'+i))] = s
		vals["key "+string(rune('a'+i))] = map[string]any{s: s}
	}
	for _, f := range encodeFloats {
		vals["float "+strings.ReplaceAll(json.Number(formatG(f)).String(), ".", "_")] = f
		vals["float32 "+formatG(f)] = float32(f)
	}
	return vals
}

var encodeFloats = []float64{
	0, math.Copysign(0, -1), 1, -1, 0.1, 1.5, 100, 1e20, 1e21, 123456789e13, 1e-6, 9.99999e-7, 1e-7, 5e-324,
	math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, 1.0 / 3, 12345678.9, 1e-10, 2.5e-9,
	math.MaxFloat32, 1 << 53, 1<<53 + 1, 3.4028235e38, 1.17549435e-38,
}

func formatG(f float64) string { b, _ := json.Marshal(f); return string(b) }

func manyKeys(n int) map[string]any {
	m := map[string]any{}
	for i := range n {
		m[strings.Repeat("k", i%7)+string(rune('a'+i%26))+string(rune('0'+i/26))] = float64(i)
	}
	return m
}

func TestAppendJSON(t *testing.T) {
	for name, v := range encodeValues() {
		checkEncode(t, name, v, AppendJSON)
	}
}

// paramsValues are the params AppendParams writes itself, with every
// field set and unset, and others it leaves to encoding/json.
func paramsValues() map[string]mcp.Params {
	meta := mcp.Meta{
		"io.modelcontextprotocol/protocolVersion": "2026-07-28",
		"io.modelcontextprotocol/clientInfo":      &mcp.Implementation{Name: "agentmcp", Version: "dev"},
		"io.modelcontextprotocol/clientCapabilities": &mcp.ClientCapabilities{
			Extensions: map[string]any{"x/y": map[string]any{}}, Elicitation: &mcp.ElicitationCapabilities{},
		},
	}
	return map[string]mcp.Params{
		"call":              &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}},
		"call meta":         &mcp.CallToolParams{Meta: meta, Name: "echo", Arguments: map[string]any{"text": "hi"}},
		"call empty meta":   &mcp.CallToolParams{Meta: mcp.Meta{}, Name: "echo"},
		"call no args":      &mcp.CallToolParams{Name: "x\u2028\xff"},
		"call nil map args": &mcp.CallToolParams{Name: "x", Arguments: map[string]any(nil)},
		"call raw args":     &mcp.CallToolParams{Name: "x", Arguments: json.RawMessage(` {"a" : 1} `)},
		"call struct args":  &mcp.CallToolParams{Name: "x", Arguments: struct{ A int }{1}},
		"call bad args":     &mcp.CallToolParams{Name: "x", Arguments: map[string]any{"f": math.NaN()}},
		"call state":        &mcp.CallToolParams{Meta: meta, Name: "x", Arguments: map[string]any{}, RequestState: "opaque\"state"},
		"call responses": &mcp.CallToolParams{Name: "x", RequestState: "s", InputResponses: mcp.InputResponseMap{
			"r1": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"a": "b"}},
		}},
		"call nil":        (*mcp.CallToolParams)(nil),
		"tools":           &mcp.ListToolsParams{},
		"tools cursor":    &mcp.ListToolsParams{Cursor: "c<1>"},
		"tools meta":      &mcp.ListToolsParams{Meta: meta},
		"tools both":      &mcp.ListToolsParams{Meta: meta, Cursor: "c"},
		"tools nil":       (*mcp.ListToolsParams)(nil),
		"prompts":         &mcp.ListPromptsParams{Meta: mcp.Meta{"a": 1}, Cursor: "p"},
		"prompts meta":    &mcp.ListPromptsParams{Meta: mcp.Meta{"a": 1}},
		"resources":       &mcp.ListResourcesParams{Cursor: "r"},
		"resources empty": &mcp.ListResourcesParams{},
		"templates":       &mcp.ListResourceTemplatesParams{Meta: meta, Cursor: "t"},
		"templates empty": &mcp.ListResourceTemplatesParams{Meta: mcp.Meta{}},
		"templates nil":   (*mcp.ListResourceTemplatesParams)(nil),
		"other":           &mcp.GetPromptParams{Name: "p", Arguments: map[string]string{"a": "b"}},
		"none":            nil,
	}
}

func TestAppendParams(t *testing.T) {
	for name, p := range paramsValues() {
		checkEncode(t, name, p, func(dst []byte, v any) ([]byte, error) {
			p, _ := v.(mcp.Params)
			return AppendParams(dst, p)
		})
		checkEncode(t, name+" (MarshalParams)", p, func(dst []byte, v any) ([]byte, error) {
			p, _ := v.(mcp.Params)
			b, err := MarshalParams(p)
			return append(dst, b...), err
		})
	}
}

// TestSDKLayout fails when go-sdk changes a type AppendParams writes
// field by field: AppendParams then leaves everything to encoding/json,
// correct but slower, until it learns the change.
func TestSDKLayout(t *testing.T) {
	if !sdkLayoutKnown {
		t.Fatal("go-sdk's params or Implementation changed: teach AppendParams the new fields (layout.go)")
	}
}

// FuzzAppendJSON compares AppendJSON with encoding/json on the values
// json.Unmarshal makes of in (with and without UseNumber), on in as a
// json.RawMessage, on s as a string and a key, and on f as both floats.
func FuzzAppendJSON(f *testing.F) {
	for _, s := range encodeStrings {
		f.Add([]byte(`{"a":[1,"x",null,{"b":true}],"c":-0.5e-9}`), s, 1.5)
	}
	for _, x := range encodeFloats {
		f.Add([]byte(" [ 1e400 , 0.000001 ] "), "k", x)
	}
	for _, in := range smallCorpus {
		f.Add([]byte(in), "\u2029", 1e21)
	}
	f.Fuzz(func(t *testing.T, in []byte, s string, x float64) {
		var v any
		if json.Unmarshal(in, &v) == nil {
			checkEncode(t, "decoded", v, AppendJSON)
		}
		dec := json.NewDecoder(bytes.NewReader(in))
		dec.UseNumber()
		var n any
		if dec.Decode(&n) == nil {
			checkEncode(t, "decoded with numbers", n, AppendJSON)
		}
		checkEncode(t, "raw", json.RawMessage(in), AppendJSON)
		checkEncode(t, "number", json.Number(s), AppendJSON)
		checkEncode(t, "string", map[string]any{s: []any{s, x, float32(x)}}, AppendJSON)
		p := &mcp.CallToolParams{Meta: mcp.Meta{s: x}, Name: s, Arguments: v, RequestState: s}
		checkEncode(t, "params", p, func(dst []byte, v any) ([]byte, error) { return AppendParams(dst, v.(mcp.Params)) })
	})
}

// BenchmarkMarshalParams encodes an echo call's params as a 2026-07-28
// session sends them (go-sdk's _meta: the protocol version, the client's
// Implementation, the capabilities; exported ClientCapabilities stand in
// for go-sdk's unexported copy, which encoding/json encodes alike).
func BenchmarkMarshalParams(b *testing.B) {
	caps := &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}}
	p := &mcp.CallToolParams{
		Meta: mcp.Meta{
			"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
			"io.modelcontextprotocol/clientInfo":         &mcp.Implementation{Name: "agentmcp", Version: "dev"},
			"io.modelcontextprotocol/clientCapabilities": caps,
		},
		Name:      "echo",
		Arguments: map[string]any{"text": "hello"},
	}
	benchRun(b, "MarshalParams", func() error { _, err := MarshalParams(p); return err })
	benchRun(b, "encoding/json", func() error { _, err := stdJSON(p); return err })
	// The capabilities alone, which go-sdk builds afresh for every request
	// and which are left to encoding/json.
	buf := make([]byte, 0, 256)
	benchRun(b, "capabilities", func() error { _, err := AppendJSON(buf[:0], caps); return err })
}

// benchRun runs fn as a sub-benchmark that reports allocations.
func benchRun(b *testing.B, name string, fn func() error) {
	b.Run(name, func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := fn(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestAppendPlain: a value of the generic shapes only is written as
// AppendJSON writes it; any other value (one AppendJSON hands to
// encoding/json, wherever it is nested), a value encoding/json refuses
// and one nested too deep are refused.
func TestAppendPlain(t *testing.T) {
	plain := map[string]any{
		"s": "h\u00e9llo <b>&\u2028\xff", "n": nil, "t": true, "f": 1.5, "i": int64(-3), "u": uint8(7),
		"num": json.Number("1e3"), "list": []any{"a", 1.0, map[string]any{"z": []any{}, "a": nil}}, "empty": map[string]any{},
		"meta": mcp.Meta{"k": "v"}, "keys": manyKeys(40),
	}
	want, err := AppendJSON(nil, plain)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := AppendPlain([]byte("prefix"), plain)
	if !ok || string(got) != "prefix"+string(want) {
		t.Errorf("AppendPlain = %s, %v; want prefix%s", got, ok, want)
	}
	deep := any("x")
	for range maxEncodeDepth + 1 {
		deep = []any{deep}
	}
	for name, v := range map[string]any{
		"raw":            map[string]any{"r": json.RawMessage(`{"b":1,"a":2}`)},
		"struct":         []any{struct{ A int }{1}},
		"implementation": map[string]any{"i": &mcp.Implementation{Name: "n", Version: "1"}},
		"string map":     map[string]any{"m": map[string]string{"a": "b"}},
		"NaN":            map[string]any{"f": math.NaN()},
		"too deep":       deep,
	} {
		if got, ok := AppendPlain(nil, v); ok {
			t.Errorf("%s: AppendPlain = %s, true; want refused", name, got)
		}
	}
}
