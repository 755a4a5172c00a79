package mcpclient_test

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// headerServer hosts srv statelessly (2026-07-28) and records the headers
// of every tools/call.
func headerServer(t *testing.T, srv *mcp.Server) (*mcptest.HTTPServer, func() []http.Header) {
	h := mcptest.Handler(t, mcptest.Stateless, func() *mcp.Server { return srv })
	var (
		mu   sync.Mutex
		seen []http.Header
	)
	hs := mcptest.ServeHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == "tools/call" {
			mu.Lock()
			seen = append(seen, r.Header.Clone())
			mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	return hs, func() []http.Header {
		mu.Lock()
		defer mu.Unlock()
		return append([]http.Header(nil), seen...)
	}
}

func okTool(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
}

// TestParamHeaders checks the Mcp-Param-* headers of a 2026-07-28 tool
// call, from x-mcp-header annotations at the top level and nested.
func TestParamHeaders(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "h", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "route", InputSchema: map[string]any{
		"type": "object",
		"properties": map[string]any{
			"region": map[string]any{"type": "string", "x-mcp-header": "Region"},
			"note":   map[string]any{"type": "string"},
			"opts": map[string]any{"type": "object", "properties": map[string]any{
				"tier": map[string]any{"type": "integer", "x-mcp-header": "Tier"},
			}},
		},
	}}, okTool)
	hs, seen := headerServer(t, srv)
	m := newManager(t, nil)
	connectReady(t, m, "h", mcpclient.ServerOptions{URL: hs.URL})
	args := map[string]any{"region": "eu-west", "note": "x", "opts": map[string]any{"tier": 3}}
	if _, err := m.CallTool(testCtx(t), "h", "route", args, nil); err != nil {
		t.Fatal(err)
	}
	calls := seen()
	if len(calls) != 1 {
		t.Fatalf("%d tools/call requests, want 1", len(calls))
	}
	for k, want := range map[string]string{"Mcp-Param-Region": "eu-west", "Mcp-Param-Tier": "3", "Mcp-Name": "route"} {
		if got := calls[0].Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	for k := range calls[0] {
		if strings.HasPrefix(k, "Mcp-Param-") && k != "Mcp-Param-Region" && k != "Mcp-Param-Tier" {
			t.Errorf("unexpected header %s", k)
		}
	}
}

// TestCatalogCyclingHoldsMemory: a long-lived Manager whose catalog is
// replaced again and again (every rediscovery brings new tool definitions),
// with a call of a tool after each, keeps no old definitions alive: the
// heap after the cycles stays within a generous bound of the heap before.
func TestCatalogCyclingHoldsMemory(t *testing.T) {
	// A tool with a large schema (about 60 KiB of descriptions), with
	// x-mcp-header bindings so that calls derive headers from it.
	props := map[string]any{"key": map[string]any{"type": "string", "x-mcp-header": "Key"}}
	for i := range 20 {
		props[fmt.Sprintf("p%02d", i)] = map[string]any{"type": "string",
			"description": strings.Repeat(fmt.Sprintf("property %d. ", i), 250)}
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "fat", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "fat", InputSchema: map[string]any{"type": "object", "properties": props}}, okTool)
	hs, seen := headerServer(t, srv)
	m := newManager(t, nil)
	connectReady(t, m, "fat", mcpclient.ServerOptions{URL: hs.URL})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a safety net
	defer cancel()

	cycle := func() {
		if d, err := m.DiscoverIfConnected(ctx, "fat", nil); err != nil || !d.Success {
			t.Fatalf("discover: %+v, %v", d, err)
		}
		if _, err := m.CallTool(ctx, "fat", "fat", map[string]any{"key": "k"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	for range 5 {
		cycle()
	}
	before := heap()
	const cycles = 80
	for range cycles {
		cycle()
	}
	after := heap()
	growth := int64(after) - int64(before)
	t.Logf("heap %d KiB before, %d KiB after %d catalog replacements (%+d KiB)", before>>10, after>>10, cycles, growth>>10)
	const bound = 2 << 20
	if growth > bound {
		t.Errorf("the heap grew by %d KiB over %d catalog replacements, more than %d KiB: old catalogs are kept", growth>>10, cycles, bound>>10)
	}
	if calls := seen(); len(calls) == 0 || calls[len(calls)-1].Get("Mcp-Param-Key") != "k" {
		t.Errorf("the calls carried no Mcp-Param-Key header")
	}
}
