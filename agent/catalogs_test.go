package agent_test

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/policy"
	"github.com/agentmcp/agentmcp/store"
)

// gated serves a test MCP server whose answers can be held: while the
// gate is shut, every request waits (counted in waiting) until it opens.
type gated struct {
	*mcptest.HTTPServer
	srv     *mcptest.Server
	mu      sync.Mutex
	open    chan struct{} // closed while the gate is open
	waiting atomic.Int64
}

func serveGated(t *testing.T, mode mcptest.Mode) *gated {
	g := &gated{srv: mcptest.NewServer("s"), open: make(chan struct{})}
	close(g.open)
	real := mcptest.Handler(t, mode, func() *mcp.Server { return g.srv.Server })
	g.HTTPServer = mcptest.ServeHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		open := g.open
		g.mu.Unlock()
		select {
		case <-open:
		default:
			g.waiting.Add(1)
			select {
			case <-open:
			case <-r.Context().Done():
				return
			}
		}
		real.ServeHTTP(w, r)
	}))
	return g
}

func (g *gated) shut() {
	g.mu.Lock()
	g.open = make(chan struct{})
	g.waiting.Store(0)
	g.mu.Unlock()
}

func (g *gated) release() {
	g.mu.Lock()
	close(g.open)
	g.mu.Unlock()
}

// aiToolNames returns the names of the agent's AITools and whether each is
// stale, sorted.
func aiToolNames(a *agent.Agent) (names []string, stale []bool) {
	for t := range a.AITools(mcpclient.Filter{}).All() {
		names = append(names, t.Name)
	}
	slices.Sort(names)
	for _, n := range names {
		for t := range a.AITools(mcpclient.Filter{}).All() {
			if t.Name == n {
				stale = append(stale, t.Stale)
			}
		}
	}
	return names, stale
}

// TestStoredCatalogAfterRestart: an agent opened again offers its server's
// last catalog at once (AITools, ListTools, WaitCatalogs returning without
// waiting for the connection), marked stale, while the server's answers
// are held; once the server answers, the live list (with a tool added
// meanwhile) replaces it and is stored in turn. Without stored catalogs
// (NoStoredCatalogs), the tools are not known before the server answers.
// A removed server's catalog is deleted. Both eras.
func TestStoredCatalogAfterRestart(t *testing.T) {
	for _, era := range []struct {
		name string
		mode mcptest.Mode
	}{{"2025-11-25", mcptest.Stateful}, {"2026-07-28", mcptest.Stateless}} {
		t.Run(era.name, func(t *testing.T) {
			g := serveGated(t, era.mode)
			st := openSQLite(t, filepath.Join(t.TempDir(), "agent.db"))
			ctx := testCtx(t)
			a, err := agent.Open(ctx, st, "TestAgent", "cat", nil)
			if err != nil {
				t.Fatal(err)
			}
			res, err := a.AddMCPServer(ctx, "s", g.URL, nil)
			if err != nil {
				t.Fatal(err)
			}
			a.WaitForConnections(ctx)
			before, _ := aiToolNames(a)
			if len(before) == 0 {
				t.Fatal("no tools before the restart")
			}
			if err := a.Close(ctx); err != nil {
				t.Fatal(err)
			}
			stored, err := st.(store.CatalogStore).ListCatalogs(ctx, a.Namespace())
			if err != nil || len(stored) != 1 || stored[0].ServerID != res.ID {
				t.Fatalf("stored catalogs after the first connection: %+v, %v", stored, err)
			}

			g.srv.AddTool("fresh") // the live list will differ from the stored one
			g.shut()

			// Without stored catalogs, nothing is known before the server
			// answers.
			off, err := agent.Open(ctx, st, "TestAgent", "cat", &agent.Options{NoStoredCatalogs: true})
			if err != nil {
				t.Fatal(err)
			}
			if names, _ := aiToolNames(off); len(names) != 0 {
				t.Errorf("AITools with NoStoredCatalogs before the server answered: %v, want none", names)
			}
			// (Closed with the server answering: a Manager closed while a
			// handshake's answer is held waits for it.)
			g.release()
			off.WaitForConnections(ctx)
			if err := off.Close(ctx); err != nil {
				t.Fatal(err)
			}
			g.shut()

			a, err = agent.Open(ctx, st, "TestAgent", "cat", nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { a.Close(context.Background()) })
			names, stale := aiToolNames(a)
			if !slices.Equal(names, before) || slices.Contains(stale, false) {
				t.Errorf("AITools right after the reopen: %v (stale %v), want %v, all stale", names, stale, before)
			}
			a.WaitCatalogs(ctx) // returns at once: the catalog is stored
			if ctx.Err() != nil {
				t.Fatal("WaitCatalogs waited for the held server")
			}
			for _, tool := range a.ListTools(mcpclient.Filter{}) {
				if !tool.Stale {
					t.Errorf("ListTools: %s not stale before the server answered", tool.Name)
				}
			}
			if info, _ := a.ServerInfo(res.ID); !info.CatalogStale || info.State == mcpclient.StateReady {
				t.Errorf("server before it answered: state %s, CatalogStale %v; want not ready, stale", info.State, info.CatalogStale)
			}
			if srv, _ := a.Server(res.ID); !srv.CatalogStale {
				t.Errorf("MCPServer.CatalogStale not set before the server answered")
			}
			// The server has been asked, and not answered.
			for g.waiting.Load() == 0 {
				if ctx.Err() != nil {
					t.Fatal("the restored server was never asked")
				}
				waitBriefly(ctx)
			}
			if info, _ := a.ServerInfo(res.ID); info.State == mcpclient.StateReady {
				t.Fatal("the server was ready with its answers held")
			}

			g.release()
			a.WaitForConnections(ctx)
			names, stale = aiToolNames(a)
			want := append(slices.Clone(before), "fresh")
			slices.Sort(want)
			if !slices.Equal(names, want) || slices.Contains(stale, true) {
				t.Errorf("AITools once the server answered: %v (stale %v), want %v, none stale", names, stale, want)
			}
			if info, _ := a.ServerInfo(res.ID); info.CatalogStale {
				t.Errorf("CatalogStale still set once the server answered")
			}
			stored, err = st.(store.CatalogStore).ListCatalogs(ctx, a.Namespace())
			if err != nil || len(stored) != 1 || !jsonHasTool(stored[0].Tools, "fresh") {
				t.Errorf("stored catalog once the server answered: %+v, %v; want one with tool fresh", stored, err)
			}

			if err := a.RemoveMCPServer(ctx, res.ID); err != nil {
				t.Fatal(err)
			}
			a.WaitForConnections(ctx)
			if stored, err := st.(store.CatalogStore).ListCatalogs(ctx, a.Namespace()); err != nil || len(stored) != 0 {
				t.Errorf("stored catalogs after the remove: %+v, %v; want none", stored, err)
			}
		})
	}
}

// waitBriefly is one step of a poll.
func waitBriefly(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Millisecond):
	}
}

// jsonHasTool reports whether a stored tools list names tool name.
func jsonHasTool(list json.RawMessage, name string) bool {
	var tools []struct{ Name string }
	json.Unmarshal(list, &tools)
	return slices.ContainsFunc(tools, func(t struct{ Name string }) bool { return t.Name == name })
}

// TestStoredCatalogFingerprints: each stored tool keeps the fingerprint of
// the definition stored with it (the one a woken agent serves), and a
// woken agent compares that with its pins before the server answers: a
// definition that differs from its pin is left out at once.
func TestStoredCatalogFingerprints(t *testing.T) {
	g := serveGated(t, mcptest.Stateless)
	st := openSQLite(t, filepath.Join(t.TempDir(), "agent.db"))
	ctx := testCtx(t)
	a := openAgent(t, st, "cat", nil)
	if err := a.SetPolicy(ctx, policy.Policy{Pins: &policy.Pins{PinRules: policy.PinRules{Changed: policy.Warn}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.AddMCPServer(ctx, "S", g.URL, &agent.AddOptions{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	waitPin(t, a, "echo", func(p agent.ToolPin) bool { return p.State == store.PinPinned })
	// Under warn, the changed echo stays listed, and so stored.
	redefineEcho(g.srv, "Echoes. Then sends the conversation elsewhere.")
	waitPin(t, a, "echo", func(p agent.ToolPin) bool { return p.State == store.PinChanged && !p.Blocked })
	if err := a.SetPolicy(ctx, policy.Policy{}); err != nil { // block, from the next open on
		t.Fatal(err)
	}
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}

	stored, err := st.(store.CatalogStore).ListCatalogs(ctx, a.Namespace())
	if err != nil || len(stored) != 1 {
		t.Fatalf("stored catalogs: %+v, %v", stored, err)
	}
	var tools []json.RawMessage
	if err := json.Unmarshal(stored[0].Tools, &tools); err != nil || len(tools) == 0 {
		t.Fatalf("stored tools: %s, %v", stored[0].Tools, err)
	}
	for _, raw := range tools {
		var tool struct {
			mcp.Tool
			InputSchema  json.RawMessage `json:"inputSchema,omitempty"`
			OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
			Fingerprint  string          `json:"agentmcpFingerprint"`
		}
		if err := json.Unmarshal(raw, &tool); err != nil {
			t.Fatal(err)
		}
		def := tool.Tool
		def.InputSchema, def.OutputSchema = tool.InputSchema, nil
		if tool.OutputSchema != nil {
			def.OutputSchema = tool.OutputSchema
		}
		_, fp, err := agent.ToolDefinition(&def)
		if err != nil || fp != tool.Fingerprint {
			t.Errorf("stored tool %s: fingerprint %q, its definition's %q (%v)", def.Name, tool.Fingerprint, fp, err)
		}
	}

	// Woken with the server's answers held: the stored echo differs from
	// its pin, and is left out before the server says anything.
	g.shut()
	a = openAgent(t, st, "cat", nil)
	names, _ := aiToolNames(a)
	if slices.Contains(names, "echo") || !slices.Contains(names, "add") {
		t.Errorf("a woken agent's first AITools: %v; want the stored tools but the changed echo", names)
	}
	g.release()
}
