package aitools_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/aitools"
)

// recorder is a Caller that records calls and answers with their
// arguments.
type recorder struct {
	mu    sync.Mutex
	calls []string // "server/tool"
	args  []map[string]any
	reply func(server, tool string, args map[string]any) (*mcp.CallToolResult, error)
}

func (r *recorder) call(_ context.Context, server, tool string, args map[string]any) (*mcp.CallToolResult, error) {
	r.mu.Lock()
	r.calls = append(r.calls, server+"/"+tool)
	r.args = append(r.args, args)
	r.mu.Unlock()
	if r.reply != nil {
		return r.reply(server, tool, args)
	}
	b, _ := json.Marshal(args)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.calls)
}

func objectSchema(props map[string]any, required ...string) map[string]any {
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		req := make([]any, len(required))
		for i, r := range required {
			req[i] = r
		}
		s["required"] = req
	}
	return s
}

func TestToolFields(t *testing.T) {
	out := objectSchema(map[string]any{"sum": map[string]any{"type": "number"}})
	tools := []aitools.MCPTool{
		{ServerID: "s", Def: &mcp.Tool{Name: "titled", Title: "Titled", Description: "d1",
			Annotations: &mcp.ToolAnnotations{Title: "annotation title"},
			InputSchema: objectSchema(map[string]any{"a": map[string]any{"type": "integer"}}), OutputSchema: out}},
		{ServerID: "s", Def: &mcp.Tool{Name: "annotated", Annotations: &mcp.ToolAnnotations{Title: "From annotations"}}},
		{ServerID: "s", Def: &mcp.Tool{Name: "raw", InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"type":"string"}}}`)}},
		{ServerID: "s", Def: nil}, // ignored
	}
	set := aitools.NewCache(noCall, nil).Build(tools)
	type view struct {
		Key, Title, Description string
		In, Out                 map[string]any
		InJSON                  string
	}
	var got []view
	for tool := range set.All() {
		got = append(got, view{tool.Key, tool.Title, tool.Description, tool.InputSchema, tool.OutputSchema, string(tool.InputSchemaJSON())})
	}
	want := []view{
		{"tool_s_titled", "Titled", "d1", objectSchema(map[string]any{"a": map[string]any{"type": "integer"}}), out,
			`{"properties":{"a":{"type":"integer"}},"type":"object"}`},
		{"tool_s_annotated", "From annotations", "", map[string]any{"type": "object", "properties": map[string]any{}}, nil,
			`{"type":"object","properties":{}}`},
		{"tool_s_raw", "", "", objectSchema(map[string]any{"x": map[string]any{"type": "string"}}), nil,
			`{"type":"object","properties":{"x":{"type":"string"}}}`},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

// TestCacheReuse: an unchanged catalog costs no schema work; a refresh
// re-hashes replaced definitions but decodes and recompiles only schemas
// whose bytes changed; tools that left are forgotten.
func TestCacheReuse(t *testing.T) {
	rec := &recorder{}
	cache := aitools.NewCache(rec.call, nil)
	schemaA := func() map[string]any {
		return objectSchema(map[string]any{"n": map[string]any{"type": "integer"}}, "n")
	}
	defs := []aitools.MCPTool{
		{ServerID: "s", Def: &mcp.Tool{Name: "a", InputSchema: schemaA()}},
		{ServerID: "s", Def: &mcp.Tool{Name: "b", InputSchema: objectSchema(nil)}},
	}
	ctx := context.Background()
	set1 := cache.Build(defs)
	if _, err := set1.Execute(ctx, "tool_s_a", json.RawMessage(`{"n":1}`)); err != nil {
		t.Fatal(err)
	}
	want := aitools.CacheStats{Builds: 1, Rebuilds: 1, SchemasHashed: 2, NewSchemas: 2, Compiles: 1, Entries: 2}
	if diff := cmp.Diff(want, cache.Stats()); diff != "" {
		t.Fatalf("after the first build (-want +got):\n%s", diff)
	}

	// Unchanged: the same ToolSet, no work.
	if set2 := cache.Build(defs); set2 != set1 {
		t.Errorf("an unchanged catalog gave a new ToolSet")
	}
	want.Builds++
	if diff := cmp.Diff(want, cache.Stats()); diff != "" {
		t.Errorf("after an unchanged build (-want +got):\n%s", diff)
	}

	// Refresh: new definitions, a's schema unchanged, b's changed.
	defs = []aitools.MCPTool{
		{ServerID: "s", Def: &mcp.Tool{Name: "a", InputSchema: schemaA(), Description: "new text"}},
		{ServerID: "s", Def: &mcp.Tool{Name: "b", InputSchema: objectSchema(map[string]any{"x": map[string]any{"type": "string"}})}},
	}
	set3 := cache.Build(defs)
	if tool, _ := set3.Get("tool_s_a"); tool.Description != "new text" {
		t.Errorf("description %q not refreshed", tool.Description)
	}
	for _, args := range []string{`{"n":2}`, `{"n":3}`} {
		if _, err := set3.Execute(ctx, "tool_s_a", json.RawMessage(args)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := set3.Execute(ctx, "tool_s_b", json.RawMessage(`{"x":"y"}`)); err != nil {
		t.Fatal(err)
	}
	want.Builds++
	want.Rebuilds++
	want.SchemasHashed += 2
	want.NewSchemas++ // b only
	want.Compiles++   // b only: a's validator is reused
	if diff := cmp.Diff(want, cache.Stats()); diff != "" {
		t.Errorf("after a refresh (-want +got):\n%s", diff)
	}

	// A tool leaves: it is forgotten.
	cache.Build(defs[:1])
	want.Builds++
	want.Rebuilds++
	want.Entries = 1
	if diff := cmp.Diff(want, cache.Stats()); diff != "" {
		t.Errorf("after a removal (-want +got):\n%s", diff)
	}
	if rec.count() != 4 {
		t.Errorf("%d calls, want 4", rec.count())
	}
}

// TestSelect: a selection keeps keys and the collisions that involve it.
func TestSelect(t *testing.T) {
	set := aitools.NewCache(noCall, nil).Build(catalog("my-server|x", "myserver|x", "other|y"))
	sel := set.Select(func(t *aitools.Tool) bool { return t.ServerID != "myserver" })
	if sel.Len() != 2 {
		t.Fatalf("%d tools", sel.Len())
	}
	if got := keysOf(sel); got["my-server|x"] != aitools.SafeKey("my-server", "x") || got["other|y"] != "tool_other_y" {
		t.Errorf("keys %v", got)
	}
	if len(sel.Collisions()) != 1 {
		t.Errorf("collisions %+v", sel.Collisions())
	}
	if sel := set.Select(func(t *aitools.Tool) bool { return t.ServerID == "other" }); len(sel.Collisions()) != 0 {
		t.Errorf("collisions %+v", sel.Collisions())
	}
}

// TestConcurrent builds and executes from many goroutines (run with -race).
func TestConcurrent(t *testing.T) {
	rec := &recorder{}
	cache := aitools.NewCache(rec.call, nil)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 20 {
				set := cache.Build(catalog("s|a", "s|b"))
				if i%2 == 0 {
					set = cache.Build(catalog("s|a"))
				}
				if _, err := set.Execute(context.Background(), "tool_s_a", json.RawMessage(`{}`)); err != nil {
					t.Errorf("goroutine %d: %v", g, err)
				}
				_ = cache.Stats()
			}
		})
	}
	wg.Wait()
}
