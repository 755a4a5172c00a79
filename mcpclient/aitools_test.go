package mcpclient

// These tests are in package mcpclient, not mcpclient_test, so that the
// benchmark can empty the Manager's AITools cache.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/aitools"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
)

// aiManager returns a Manager closed when the test ends, with the servers
// given, connected in process and discovered.
func aiManager(t testing.TB, servers map[string]*mcp.Server, order ...string) *Manager {
	t.Helper()
	m := New(nil)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := m.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, id := range order {
		s := servers[id]
		if _, err := m.RegisterServer(ctx, id, ServerOptions{Name: id,
			InProcess: func(context.Context, map[string]any) (*mcp.Server, error) { return s, nil }}); err != nil {
			t.Fatal(err)
		}
		if res, err := m.ConnectToServer(ctx, id); err != nil || res.State != StateConnected {
			t.Fatalf("ConnectToServer(%s) = %+v, %v", id, res, err)
		}
		if res, err := m.DiscoverIfConnected(ctx, id, nil); err != nil || !res.Success {
			t.Fatalf("DiscoverIfConnected(%s) = %+v, %v", id, res, err)
		}
	}
	return m
}

// countCalls counts the tools/call requests s receives.
func countCalls(s *mcp.Server) *atomic.Int64 {
	var n atomic.Int64
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" {
				n.Add(1)
			}
			return next(ctx, method, req)
		}
	})
	return &n
}

func aiKeys(set *aitools.ToolSet) map[string]string {
	out := map[string]string{}
	for t := range set.All() {
		out[t.ServerID+"/"+t.Name] = t.Key
	}
	return out
}

func firstText(r *mcp.CallToolResult) string {
	if r != nil && len(r.Content) > 0 {
		if t, ok := r.Content[0].(*mcp.TextContent); ok {
			return t.Text
		}
	}
	return ""
}

// TestAITools: keys, fields, Execute on the current connection, tool
// errors, filters, and keys that survive a catalog refresh.
func TestAITools(t *testing.T) {
	s1, s2 := mcptest.NewServer("one"), mcptest.NewServer("two")
	s1.AddTool("fs.read_file") // a name providers reject
	calls1 := countCalls(s1.Server)
	m := aiManager(t, map[string]*mcp.Server{"server-1": s1.Server, "s2": s2.Server}, "server-1", "s2")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	set := m.AITools(Filter{})
	keys := aiKeys(set)
	for id, want := range map[string]string{
		"server-1/echo":         "tool_server1_echo",
		"server-1/add":          "tool_server1_add",
		"s2/echo":               "tool_s2_echo",
		"server-1/fs.read_file": aitools.SafeKey("server-1", "fs.read_file"),
	} {
		if keys[id] != want {
			t.Errorf("%s: key %q, want %q", id, keys[id], want)
		}
	}
	if set.Len() != len(m.ListTools(Filter{})) {
		t.Errorf("%d AI tools for %d tools", set.Len(), len(m.ListTools(Filter{})))
	}
	echo, _ := set.Get("tool_server1_echo")
	if echo.Description != "Echoes its text." || echo.InputSchema["type"] != "object" {
		t.Errorf("echo: %+v", echo)
	}

	res, err := set.Execute(ctx, "tool_server1_add", json.RawMessage(`{"a": 2, "b": 3}`))
	if err != nil || firstText(res) != "5" {
		t.Fatalf("add: %v, %v", res, err)
	}
	_, err = set.Execute(ctx, "tool_server1_fail", nil)
	var terr *aitools.ToolError
	if !errors.As(err, &terr) || err.Error() != "it failed" {
		t.Errorf("fail: %v, want a ToolError \"it failed\"", err)
	}

	// Acceptance test 3: bad arguments never reach the server.
	before := calls1.Load()
	_, err = set.Execute(ctx, "tool_server1_add", json.RawMessage(`{"a": "two", "b": 3}`))
	if want := `invalid arguments for tool "tool_server1_add": argument "a": got string, want integer`; err == nil || err.Error() != want {
		t.Errorf("add with bad arguments: %v, want %s", err, want)
	}
	_, err = set.Execute(ctx, "tool_server1_echo", json.RawMessage(`{"text": 42}`))
	if !errors.Is(err, aitools.ErrInvalidArguments) || !strings.Contains(err.Error(), `argument "text"`) {
		t.Errorf("echo with bad arguments: %v", err)
	}
	if n := calls1.Load() - before; n != 0 {
		t.Errorf("the server received %d calls with invalid arguments", n)
	}

	// Execute uses the server's current connection.
	if err := m.CloseConnection(ctx, "server-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := set.Execute(ctx, "tool_server1_echo", json.RawMessage(`{"text":"x"}`)); !errors.Is(err, ErrNotConnected) {
		t.Errorf("echo while disconnected: %v, want ErrNotConnected", err)
	}
	if res, err := m.ConnectToServer(ctx, "server-1"); err != nil || res.State != StateConnected {
		t.Fatalf("reconnect: %+v %v", res, err)
	}
	if res, err := set.Execute(ctx, "tool_server1_echo", json.RawMessage(`{"text":"x"}`)); err != nil || firstText(res) != "echo: x" {
		t.Errorf("echo after reconnecting: %v, %v", res, err)
	}
	// Closing dropped the catalog; discover it again.
	if res, err := m.DiscoverIfConnected(ctx, "server-1", nil); err != nil || !res.Success {
		t.Fatalf("rediscover: %+v %v", res, err)
	}
	set = m.AITools(Filter{})
	if diff := cmp.Diff(keys, aiKeys(set)); diff != "" {
		t.Errorf("keys after reconnecting (-was +now):\n%s", diff)
	}

	// A filter selects, and keeps the keys.
	sel := m.AITools(Filter{ServerID: []string{"s2"}})
	var selKeys []string
	for tool := range sel.All() {
		selKeys = append(selKeys, tool.Key)
		if tool.ServerID != "s2" || keys[tool.ServerID+"/"+tool.Name] != tool.Key {
			t.Errorf("filtered tool %s/%s has key %s", tool.ServerID, tool.Name, tool.Key)
		}
	}
	if len(selKeys) == 0 || m.AITools(Filter{ServerName: []string{"nope"}}).Len() != 0 {
		t.Errorf("filter: %v", selKeys)
	}

	// Unchanged catalog: the same ToolSet, no schema work.
	stats := m.aiTools.cache.Stats()
	if again := m.AITools(Filter{}); again != set {
		t.Errorf("an unchanged catalog gave a new ToolSet")
	}
	if got := m.aiTools.cache.Stats(); got.SchemasHashed != stats.SchemasHashed || got.Rebuilds != stats.Rebuilds {
		t.Errorf("an unchanged catalog cost work: %+v, was %+v", got, stats)
	}

	// A refresh (list_changed) adds a tool; every other key stays, and
	// only the new schema is decoded.
	changed := make(chan struct{}, 8)
	dispose := m.Subscribe(func(ev Event) {
		if ev.Kind == EventToolsChanged && ev.ServerID == "s2" {
			changed <- struct{}{}
		}
	})
	defer dispose()
	s2.AddTool("late")
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("no tools event")
	}
	set2 := m.AITools(Filter{})
	keys2 := aiKeys(set2)
	for id, key := range keys {
		if keys2[id] != key {
			t.Errorf("%s: key %q after the refresh, was %q", id, keys2[id], key)
		}
	}
	if keys2["s2/late"] != "tool_s2_late" {
		t.Errorf("new tool: %v", keys2)
	}
	got := m.aiTools.cache.Stats()
	if decoded := got.NewSchemas - stats.NewSchemas; decoded != 1 {
		t.Errorf("the refresh decoded %d schemas, want 1 (the new tool's)", decoded)
	}
}

// TestAIToolsCollisions: servers whose ids differ only by "-", with the
// same tools. Every tool is there, under a distinct, reversible key, and
// the collisions are reported.
func TestAIToolsCollisions(t *testing.T) {
	a, b := mcptest.NewServer("a"), mcptest.NewServer("b")
	m := aiManager(t, map[string]*mcp.Server{"my-server": a.Server, "myserver": b.Server}, "my-server", "myserver")
	set := m.AITools(Filter{})
	if set.Len() != len(m.ListTools(Filter{})) {
		t.Fatalf("%d AI tools for %d tools", set.Len(), len(m.ListTools(Filter{})))
	}
	for tool := range set.All() {
		if want := aitools.SafeKey(tool.ServerID, tool.Name); tool.Key != want {
			t.Errorf("%s/%s: key %q, want %q", tool.ServerID, tool.Name, tool.Key, want)
		}
		if s, n, ok := set.Lookup(tool.Key); !ok || s != tool.ServerID || n != tool.Name {
			t.Errorf("Lookup(%q) = %s, %s, %v", tool.Key, s, n, ok)
		}
	}
	var contested []string
	for _, c := range set.Collisions() {
		contested = append(contested, c.Key)
	}
	slices.Sort(contested)
	want := []string{"tool_myserver_add", "tool_myserver_echo", "tool_myserver_fail",
		"tool_myserver_increment", "tool_myserver_progress", "tool_myserver_slow"}
	if diff := cmp.Diff(want, contested); diff != "" {
		t.Errorf("collisions (-want +got):\n%s", diff)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := set.Execute(ctx, aitools.SafeKey("myserver", "increment"), nil); err != nil {
		t.Fatal(err)
	}
	if a.Increments.Load() != 0 || b.Increments.Load() != 1 {
		t.Errorf("increments: my-server %d, myserver %d; want 0 and 1", a.Increments.Load(), b.Increments.Load())
	}
}

// BenchmarkAITools: Manager.AITools on 10,000 tools over 50 servers, with
// a cold cache and on an unchanged catalog.
func BenchmarkAITools(b *testing.B) {
	const nServers, perServer = 50, 200
	servers := map[string]*mcp.Server{}
	var order []string
	for s := range nServers {
		srv := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
		for i := range perServer {
			srv.AddTool(&mcp.Tool{Name: fmt.Sprintf("list_items_%d", i), Description: "Lists items.",
				InputSchema: json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{`+
					`"owner":{"type":"string","description":"Owner of resource %d"},`+
					`"name":{"type":"string","minLength":1,"maxLength":100},`+
					`"limit":{"type":"integer","minimum":1,"maximum":100,"default":30},`+
					`"state":{"type":"string","enum":["open","closed","all"]},`+
					`"labels":{"type":"array","items":{"type":"string"}},`+
					`"archived":{"type":"boolean"}},"required":["owner","name"],"additionalProperties":false}`, s*perServer+i))},
				func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return &mcp.CallToolResult{}, nil
				})
		}
		id := fmt.Sprintf("server-%d", s)
		servers[id] = srv
		order = append(order, id)
	}
	m := aiManager(b, servers, order...)
	if n := m.AITools(Filter{}).Len(); n != nServers*perServer {
		b.Fatalf("%d tools", n)
	}
	b.Run("cold", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m.aiTools = newAIToolsCache(m)
			m.AITools(Filter{})
		}
	})
	b.Run("warm", func(b *testing.B) {
		m.AITools(Filter{})
		b.ReportAllocs()
		for b.Loop() {
			m.AITools(Filter{})
		}
	})
}
