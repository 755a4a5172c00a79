package aitools_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/aitools"
)

const chargeSchema = `{
	"type": "object",
	"properties": {
		"amount": {"type": "integer", "minimum": 1},
		"currency": {"enum": ["usd", "eur"]},
		"note": {"type": "string", "maxLength": 5},
		"items": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}
	},
	"required": ["amount", "currency"],
	"additionalProperties": false
}`

const draft07Schema = `{
	"$schema": "http://json-schema.org/draft-07/schema#",
	"definitions": {"label": {"type": "string", "pattern": "^[a-z]+$"}},
	"type": "object",
	"properties": {
		"pair": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}], "additionalItems": false},
		"label": {"$ref": "#/definitions/label"}
	}
}`

// TestValidation is acceptance test 3, on the ToolSet: bad arguments are
// refused with a message that names the field and the constraint, and
// never reach the Caller.
func TestValidation(t *testing.T) {
	tests := []struct {
		name, schema, args string
		want               string // the error message; "" for a valid call
	}{
		{"valid", chargeSchema, `{"amount": 5, "currency": "usd"}`, ""},
		{"wrong type", chargeSchema, `{"amount": "5", "currency": "usd"}`,
			`invalid arguments for tool "tool_s_t": argument "amount": got string, want integer`},
		{"missing", chargeSchema, `{"amount": 5}`,
			`invalid arguments for tool "tool_s_t": missing property 'currency'`},
		{"several", chargeSchema, `{"amount": 0, "currency": "gbp", "note": "too long"}`,
			`invalid arguments for tool "tool_s_t": argument "amount": minimum: got 0, want 1; argument "currency": value must be one of 'usd', 'eur'; argument "note": maxLength: got 8, want 5`},
		{"nested", chargeSchema, `{"amount": 1, "currency": "eur", "items": [{"name": "a"}, {}]}`,
			`invalid arguments for tool "tool_s_t": argument "items[1]": missing property 'name'`},
		{"additional", chargeSchema, `{"amount": 1, "currency": "eur", "extra": true}`,
			`invalid arguments for tool "tool_s_t": additional properties 'extra' not allowed`},
		{"not json", chargeSchema, `{"amount": `,
			`invalid arguments for tool "tool_s_t": arguments are not valid JSON: unexpected EOF`},
		{"not an object", chargeSchema, `[1, 2]`,
			`invalid arguments for tool "tool_s_t": arguments must be a JSON object, not a array`},
		{"empty means {}", chargeSchema, ``,
			`invalid arguments for tool "tool_s_t": missing properties 'amount', 'currency'`},
		{"draft-07 valid", draft07Schema, `{"pair": ["a", 1], "label": "abc"}`, ""},
		{"draft-07 tuple", draft07Schema, `{"pair": ["a", "b"]}`,
			`invalid arguments for tool "tool_s_t": argument "pair[1]": got string, want integer`},
		{"draft-07 additionalItems", draft07Schema, `{"pair": ["a", 1, 2]}`,
			`invalid arguments for tool "tool_s_t": argument "pair": last 1 additionalItem(s) not allowed`},
		{"draft-07 definitions", draft07Schema, `{"label": "ABC"}`,
			`invalid arguments for tool "tool_s_t": argument "label": 'ABC' does not match pattern '^[a-z]+$'`},
		{"oneOf", `{"type":"object","properties":{"v":{"oneOf":[{"type":"string"},{"type":"integer"}]}}}`, `{"v": true}`,
			`invalid arguments for tool "tool_s_t": argument "v": 'oneOf' failed, none matched; argument "v": got boolean, want string; argument "v": got boolean, want integer`},
		{"many", `{"type":"object","additionalProperties":{"type":"integer"}}`,
			`{"a":"x","b":"x","c":"x","d":"x","e":"x","f":"x","g":"x","h":"x","i":"x","j":"x"}`,
			`invalid arguments for tool "tool_s_t": argument "a": got string, want integer; argument "b": got string, want integer; ` +
				`argument "c": got string, want integer; argument "d": got string, want integer; argument "e": got string, want integer; ` +
				`argument "f": got string, want integer; argument "g": got string, want integer; argument "h": got string, want integer; ` +
				`and 2 more problems`},
		{"odd property names", `{"type":"object","properties":{"a.b":{"type":"object","properties":{"0":{"type":"string"}}}}}`, `{"a.b": {"0": 1}}`,
			`invalid arguments for tool "tool_s_t": argument "[\"a.b\"][\"0\"]": got number, want string`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			set := aitools.NewCache(rec.call, nil).Build([]aitools.MCPTool{
				{ServerID: "s", Def: &mcp.Tool{Name: "t", InputSchema: json.RawMessage(tt.schema)}}})
			_, err := set.Execute(context.Background(), "tool_s_t", json.RawMessage(tt.args))
			if tt.want == "" {
				if err != nil || rec.count() != 1 {
					t.Fatalf("valid arguments: %v, %d calls", err, rec.count())
				}
				return
			}
			if err == nil || err.Error() != tt.want {
				t.Errorf("error\n got %v\nwant %s", err, tt.want)
			}
			var aerr *aitools.ArgumentsError
			if !errors.Is(err, aitools.ErrInvalidArguments) || !errors.As(err, &aerr) || aerr.ServerID != "s" || aerr.Name != "t" {
				t.Errorf("error %#v is not an ArgumentsError for s/t", err)
			}
			if rec.count() != 0 {
				t.Errorf("the server was called with invalid arguments")
			}
		})
	}
}

// TestProblems: the structured form of a validation failure.
func TestProblems(t *testing.T) {
	set := aitools.NewCache(noCall, nil).Build([]aitools.MCPTool{
		{ServerID: "s", Def: &mcp.Tool{Name: "t", InputSchema: json.RawMessage(chargeSchema)}}})
	_, err := set.Execute(context.Background(), "tool_s_t", json.RawMessage(`{"amount": "5", "items": [{"name": 1}]}`))
	var aerr *aitools.ArgumentsError
	if !errors.As(err, &aerr) {
		t.Fatalf("error %v", err)
	}
	want := []aitools.Problem{
		{Path: "", Keyword: "required", Message: "missing property 'currency'"},
		{Path: "amount", Keyword: "type", Message: "got string, want integer"},
		{Path: "items[0].name", Keyword: "type", Message: "got number, want string"},
	}
	if diff := cmp.Diff(want, aerr.Problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

// TestArgumentsPassThrough: valid arguments reach the server exactly as
// the model wrote them (numbers included).
func TestArgumentsPassThrough(t *testing.T) {
	rec := &recorder{}
	set := aitools.NewCache(rec.call, nil).Build([]aitools.MCPTool{{ServerID: "s", Def: &mcp.Tool{Name: "t"}}})
	res, err := set.Execute(context.Background(), "tool_s_t", json.RawMessage(`{"big": 12345678901234567890, "f": 0.1}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := aitools.ResultText(res); got != `{"big":12345678901234567890,"f":0.1}` {
		t.Errorf("the server got %s", got)
	}
	tool, _ := set.Get("tool_s_t")
	if _, err := tool.ExecuteMap(context.Background(), map[string]any{"k": []int{1, 2}}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"s/t", "s/t"}, rec.calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

func TestArgumentsTooLarge(t *testing.T) {
	rec := &recorder{}
	set := aitools.NewCache(rec.call, &aitools.CacheOptions{MaxArgumentBytes: 16}).Build(catalog("s|t"))
	_, err := set.Execute(context.Background(), "tool_s_t", json.RawMessage(`{"text": "more than sixteen bytes"}`))
	if want := `invalid arguments for tool "tool_s_t": arguments are 35 bytes, more than the limit of 16`; err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
	if rec.count() != 0 {
		t.Errorf("the server was called")
	}
}

// TestSchemaNotLoaded: references to other documents are never followed,
// neither over the network nor from files; such a schema is not enforced,
// and the call goes to the server.
func TestSchemaNotLoaded(t *testing.T) {
	var hits atomic.Int64
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write([]byte(`{"type":"string"}`))
	}))
	defer hs.Close()
	tests := []struct{ name, schema string }{
		{"http", `{"type":"object","properties":{"a":{"$ref":"` + hs.URL + `/s.json"}}}`},
		{"http $id", `{"$id":"` + hs.URL + `/root.json","type":"object","properties":{"a":{"$ref":"other.json"}}}`},
		{"file", `{"type":"object","properties":{"a":{"$ref":"file:///etc/hostname"}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			set := aitools.NewCache(rec.call, nil).Build([]aitools.MCPTool{
				{ServerID: "s", Def: &mcp.Tool{Name: "t", InputSchema: json.RawMessage(tt.schema)}}})
			tool, _ := set.Get("tool_s_t")
			if err := tool.SchemaError(); !errors.Is(err, aitools.ErrExternalRef) {
				t.Errorf("SchemaError() = %v, want ErrExternalRef", err)
			}
			if _, err := tool.Execute(context.Background(), json.RawMessage(`{"a": 1}`)); err != nil || rec.count() != 1 {
				t.Errorf("Execute: %v, %d calls; want the call passed to the server", err, rec.count())
			}
		})
	}
	if hits.Load() != 0 {
		t.Errorf("the schema server got %d requests", hits.Load())
	}
}

// TestSchemaCycle: a schema that refers to itself forever is an error,
// not a crash (jsonschema-go v0.4.3 overflows the stack on it).
func TestSchemaCycle(t *testing.T) {
	rec := &recorder{}
	set := aitools.NewCache(rec.call, nil).Build([]aitools.MCPTool{{ServerID: "s", Def: &mcp.Tool{Name: "t",
		InputSchema: json.RawMessage(`{"$defs":{"x":{"$ref":"#/$defs/x"}},"$ref":"#/$defs/x"}`)}}})
	_, err := set.Execute(context.Background(), "tool_s_t", json.RawMessage(`{"a": 1}`))
	if err == nil || rec.count() != 0 {
		t.Errorf("Execute: %v, %d calls; want an error and no call", err, rec.count())
	}
}

func TestToolFailure(t *testing.T) {
	tests := []struct {
		name    string
		content []mcp.Content
		want    string
	}{
		{"text", []mcp.Content{&mcp.TextContent{Text: "card declined"}, &mcp.TextContent{Text: "more"}}, "card declined"},
		{"no text", []mcp.Content{&mcp.ImageContent{MIMEType: "image/png", Data: []byte{1}}}, "tool call failed"},
		{"empty text", []mcp.Content{&mcp.TextContent{}}, "tool call failed"},
		{"no content", nil, "tool call failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := &mcp.CallToolResult{IsError: true, Content: tt.content}
			rec := &recorder{reply: func(string, string, map[string]any) (*mcp.CallToolResult, error) { return res, nil }}
			set := aitools.NewCache(rec.call, nil).Build(catalog("s|t"))
			got, err := set.Execute(context.Background(), "tool_s_t", nil)
			var terr *aitools.ToolError
			if got != nil || !errors.As(err, &terr) || err.Error() != tt.want || terr.Result != res || !errors.Is(err, aitools.ErrToolFailed) {
				t.Errorf("Execute = %v, %v; want a ToolError %q", got, err, tt.want)
			}
		})
	}
}

func TestExecuteAll(t *testing.T) {
	rec := &recorder{reply: func(server, tool string, args map[string]any) (*mcp.CallToolResult, error) {
		switch tool {
		case "boom":
			panic("boom")
		case "down":
			return nil, errors.New("connection refused")
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok " + tool}}}, nil
	}}
	set := aitools.NewCache(rec.call, nil).Build(catalog("s|a", "s|b", "s|boom", "s|down"))
	calls := []aitools.Call{
		{ID: "1", Key: "tool_s_a"}, {ID: "2", Key: "tool_s_b", Args: json.RawMessage(`{}`)},
		{ID: "3", Key: "tool_s_boom"}, {ID: "4", Key: "tool_s_down"}, {ID: "5", Key: "tool_nope"},
		{ID: "6", Key: "tool_s_a", Args: json.RawMessage(`"x"`)},
	}
	outs := set.ExecuteAll(context.Background(), calls, 2)
	var got []string
	for _, o := range outs {
		if o.Err != nil {
			got = append(got, o.Call.ID+" error: "+o.Err.Error())
		} else {
			got = append(got, o.Call.ID+" "+aitools.ResultText(o.Result))
		}
	}
	want := []string{
		"1 ok a", "2 ok b", `3 error: tool "tool_s_boom" panicked: boom`, "4 error: connection refused",
		`5 error: unknown tool "tool_nope"`,
		`6 error: invalid arguments for tool "tool_s_a": arguments must be a JSON object, not a string`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	if !errors.Is(outs[4].Err, aitools.ErrUnknownTool) {
		t.Errorf("unknown key: %v", outs[4].Err)
	}

	// A cancelled context: nothing runs.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	n := rec.count()
	for _, o := range set.ExecuteAll(ctx, calls[:2], 0) {
		if !errors.Is(o.Err, context.Canceled) {
			t.Errorf("call %s: %v", o.Call.ID, o.Err)
		}
	}
	if rec.count() != n {
		t.Errorf("calls ran after cancellation")
	}
}
