package agent

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// referenceCanonical is the canonical form's definition: the value
// decoded with numbers as json.Number, encoded again.
func referenceCanonical(data []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("data after the value")
	}
	return json.Marshal(v)
}

// referenceToolDefinition is ToolDefinition as first written: through a
// map of the tool's pinned fields.
func referenceToolDefinition(t *mcp.Tool) (json.RawMessage, string, error) {
	raw, err := json.Marshal(t)
	if err != nil {
		return nil, "", err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var all map[string]any
	if err := dec.Decode(&all); err != nil {
		return nil, "", err
	}
	kept := map[string]any{}
	for _, f := range pinFields {
		if v, ok := all[f]; ok {
			kept[f] = v
		}
	}
	def, err := json.Marshal(kept)
	if err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256(def)
	return def, hex.EncodeToString(sum[:]), nil
}

var canonicalCases = []string{
	`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1.0`, `1e2`, `-1.5E-7`, `12345678901234567890123`,
	`""`, `"plain"`, `"a<b>&c"`, `"\u0041\n\t\"\\\/"`, `"\u2028\u2029"`, "\"\u2028\"", `"é\u00e9"`,
	"\"bad \xff utf8\"", `"\ud800"`, `"\ufffd"`, "\"\x7f\"",
	` { "b" : 1 , "a" : [ 1 , { "d" : null , "c" : true } ] } `,
	`{"a":1,"a":2}`, `{"a":{"x":1},"b":0,"a":{"y":2}}`, `{"\u0061":1,"a":2}`, `{"a":2,"\u0061":1}`,
	`{"<":1,">":2,"&":3,"a\"b":4}`, `{"":1}`, `[[],[{}],[[[]]]]`,
	`{"type":"object","properties":{"limit":{"type":"integer","minimum":1,"maximum":100.0,"default":30}},"required":["owner"]}`,
	// Not JSON, or not one value: both refuse.
	`{`, `{"a"}`, `{"a":1,}`, `[1,]`, `01`, `1.`, `-`, `tru`, `"\x01"`, `{} {}`, `"abc`, `"\`, `{"a":1 "b":2}`, ``,
}

// TestCanonical: the one-pass canonical form is the reference's, byte
// for byte, and refuses what it refuses.
func TestCanonical(t *testing.T) {
	for _, in := range canonicalCases {
		checkCanonical(t, []byte(in))
	}
}

func checkCanonical(t *testing.T, in []byte) {
	t.Helper()
	want, werr := referenceCanonical(in)
	got, err := appendCanonical(nil, in, nil)
	if (werr != nil) != (err != nil) {
		t.Fatalf("%q: error %v, reference's %v", in, err, werr)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%q: canonical form\n%s\nwant\n%s", in, got, want)
	}
}

func FuzzCanonical(f *testing.F) {
	for _, in := range canonicalCases {
		f.Add([]byte(in))
	}
	f.Fuzz(checkCanonical)
}

// TestToolDefinitionAsBefore: ToolDefinition gives the definitions and
// fingerprints it gave through a map (pins stored earlier still match),
// for tools as the client decodes them (schemas as maps) and as stored
// catalogs hold them (schemas as JSON).
func TestToolDefinitionAsBefore(t *testing.T) {
	schema := `{"type":"object","properties":{"b":{"type":"string","description":"<b> & \u2028"},"a":{"type":"number","maximum":1.50}},"required":["b"]}`
	var m map[string]any
	if err := json.Unmarshal([]byte(schema), &m); err != nil {
		t.Fatal(err)
	}
	yes := true
	tools := []*mcp.Tool{
		{Name: "echo"},
		{Name: "echo", Title: "Echo", Description: "Echoes <text> & more.", InputSchema: m, OutputSchema: m,
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &yes, Title: "E"},
			Meta:        mcp.Meta{"x": 1}, Icons: []mcp.Icon{{Source: "https://example.com/i.png"}}},
		{Name: "raw", InputSchema: json.RawMessage(schema), OutputSchema: json.RawMessage(`{"a":1,"a":{"z":[1,2]}}`)},
		{Name: strings.Repeat("n\u00e9", 10), Description: "bad \xff"},
	}
	for _, tool := range tools {
		def, fp, err := ToolDefinition(tool)
		wdef, wfp, werr := referenceToolDefinition(tool)
		if err != nil || werr != nil {
			t.Fatalf("%s: %v, reference %v", tool.Name, err, werr)
		}
		if !bytes.Equal(def, wdef) || fp != wfp {
			t.Errorf("%s: definition\n%s\nwant\n%s", tool.Name, def, wdef)
		}
	}
}

func FuzzToolDefinition(f *testing.F) {
	f.Add("echo", "Echoes.", `{"type":"object"}`, `{"b":1,"a":[true,null]}`)
	f.Add("x", "<&>", `{"a":1,"a":2}`, ``)
	f.Fuzz(func(t *testing.T, name, desc, in, out string) {
		tool := &mcp.Tool{Name: name, Description: desc}
		if json.Valid([]byte(in)) {
			tool.InputSchema = json.RawMessage(in)
		}
		if json.Valid([]byte(out)) {
			tool.OutputSchema = json.RawMessage(out)
		}
		def, fp, err := ToolDefinition(tool)
		wdef, wfp, werr := referenceToolDefinition(tool)
		if (err != nil) != (werr != nil) || !bytes.Equal(def, wdef) || fp != wfp {
			t.Fatalf("definition %s (%v), want %s (%v)", def, err, wdef, werr)
		}
	})
}

func BenchmarkToolDefinition(b *testing.B) {
	var schema map[string]any
	json.Unmarshal([]byte(`{"type":"object","properties":{"owner":{"type":"string","description":"Owner of resource 7"},"name":{"type":"string","minLength":1,"maxLength":100},"limit":{"type":"integer","minimum":1,"maximum":100,"default":30},"state":{"type":"string","enum":["open","closed","all"]},"labels":{"type":"array","items":{"type":"string"}},"archived":{"type":"boolean"}},"required":["owner","name"],"additionalProperties":false}`), &schema)
	tool := &mcp.Tool{Name: "list_items_7", Description: "Lists the items of kind 7.", InputSchema: schema}
	b.Run("one-pass", func(b *testing.B) {
		for b.Loop() {
			ToolDefinition(tool)
		}
	})
	b.Run("through-a-map", func(b *testing.B) {
		for b.Loop() {
			referenceToolDefinition(tool)
		}
	})
}
