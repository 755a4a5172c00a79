package aitools_test

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/aitools"
)

// TestThrough: a ToolSet made Through another Caller keeps the tools keep
// accepts under the same keys and calls them through that Caller; the
// ToolSet it came from still calls through its own.
func TestThrough(t *testing.T) {
	var built, through recorder
	c := aitools.NewCache(built.call, nil)
	set := c.Build([]aitools.MCPTool{
		{ServerID: "a", Def: &mcp.Tool{Name: "read", InputSchema: objectSchema(nil)}},
		{ServerID: "a", Def: &mcp.Tool{Name: "delete", InputSchema: objectSchema(nil)}},
	})
	out := set.Through(through.call, func(t *aitools.Tool) bool { return t.Name != "delete" })
	if out.Len() != 1 {
		t.Fatalf("Through kept %d tools, want 1", out.Len())
	}
	var key string
	for tool := range set.All() {
		if tool.Name == "read" {
			key = tool.Key
		}
	}
	if _, ok := out.Get(key); !ok {
		t.Fatalf("key %q is not kept", key)
	}
	if _, err := out.Execute(t.Context(), key, json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := set.Execute(t.Context(), key, json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	if through.count() != 1 || built.count() != 1 {
		t.Fatalf("calls through the new Caller %d, through the built one %d; want 1 and 1", through.count(), built.count())
	}
	if all := set.Through(through.call, nil); all.Len() != 2 {
		t.Fatalf("Through with a nil keep kept %d tools", all.Len())
	}
}
