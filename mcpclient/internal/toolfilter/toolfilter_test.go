package toolfilter

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// decoded is raw as encoding/json decodes it, as a tool's input schema
// arrives in a tools/list answer.
func decoded(t *testing.T, raw string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestValid: Valid keeps the valid tools in their order, hands each tool
// it leaves out to excluded with why (a nil tool with ErrNilTool), and
// returns the list itself when every tool is valid. (That it keeps what
// go-sdk keeps, case by case, is package mcpclient's TestToolHeaderFilter.)
func TestValid(t *testing.T) {
	tool := func(name, schema string) *mcp.Tool {
		return &mcp.Tool{Name: name, InputSchema: decoded(t, schema)}
	}
	plain := tool("plain", `{"type":"object","properties":{"a":{"type":"string"}}}`)
	header := tool("header", `{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"Region"}}}`)
	number := tool("number", `{"type":"object","properties":{"n":{"type":"number","x-mcp-header":"N"}}}`)
	dup := tool("dup", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Key"},"o":{"type":"object","properties":{"b":{"type":"integer","x-mcp-header":"key"}}}}}`)

	all := []*mcp.Tool{plain, header}
	got := Valid(all, func(x *mcp.Tool, err error) { t.Errorf("%v left out: %v", x, err) })
	if len(got) != len(all) || &got[0] != &all[0] {
		t.Errorf("every tool valid: got a new list %v", got)
	}

	type out struct {
		tool *mcp.Tool
		err  error
	}
	var left []out
	got = Valid([]*mcp.Tool{number, plain, nil, header, dup}, func(x *mcp.Tool, err error) { left = append(left, out{x, err}) })
	if !slices.Equal(got, []*mcp.Tool{plain, header}) {
		t.Errorf("kept %v, want plain and header", got)
	}
	if len(left) != 3 || left[0].tool != number || left[1].tool != nil || left[2].tool != dup {
		t.Fatalf("left out %v, want number, nil, dup", left)
	}
	if err := left[0].err; err == nil || !strings.Contains(err.Error(), `property "n"`) || !strings.Contains(err.Error(), "primitive types") {
		t.Errorf("number: %v", err)
	}
	if !errors.Is(left[1].err, ErrNilTool) {
		t.Errorf("nil tool: %v, want ErrNilTool", left[1].err)
	}
	// Which of the two properties is named depends on the order the
	// schema's map is walked in.
	if err := left[2].err; err == nil || !(strings.Contains(err.Error(), `property "o.b"`) || strings.Contains(err.Error(), `property "a"`)) ||
		!strings.Contains(err.Error(), "duplicate") {
		t.Errorf("dup: %v", err)
	}
}

// TestHeaderAnnotationsDepth: a schema nested deeper than go-sdk reads
// for its x-mcp-header rule (1000) has no annotations for it, as in
// go-sdk, even an invalid one; one nested 1000 deep is checked. (Such a
// schema cannot reach go-sdk's own ListTools, whose reading of the whole
// message stops at that depth, but reaches the Manager's transport.)
func TestHeaderAnnotationsDepth(t *testing.T) {
	schema := func(depth int) any {
		// The object itself is one level; the array the others.
		return decoded(t, `{"type":"object","properties":{"a":{"type":"number","x-mcp-header":"A"}},"deep":`+
			strings.Repeat("[", depth-1)+strings.Repeat("]", depth-1)+`}`)
	}
	if err := Check(schema(1000)); err == nil {
		t.Error("nested 1000 deep: an invalid annotation passed")
	}
	if err := Check(schema(1001)); err != nil {
		t.Errorf("nested 1001 deep: %v, want no annotations read", err)
	}
}
