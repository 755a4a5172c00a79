package agent_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/mcpclient/input"
	"github.com/agentmcp/agentmcp/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// modes says which elicitation modes a capability advertises: "", "form",
// "url" or "form+url".
func modes(e *mcp.ElicitationCapabilities) string {
	switch {
	case e == nil:
		return ""
	case e.Form != nil && e.URL != nil:
		return "form+url"
	case e.URL != nil:
		return "url"
	}
	return "form"
}

// capsServer is a go-sdk server whose tool "caps" reports the elicitation
// modes the client advertised with the request.
func capsServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "caps", Version: "1.0.0"}, nil)
	s.AddTool(&mcp.Tool{Name: "caps", InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var e *mcp.ElicitationCapabilities
			if c := req.ClientCapabilities(); c != nil {
				e = c.Elicitation
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: modes(e)}}}, nil
		})
	return s
}

// TestElicitationPersisted: the advertised elicitation modes are stored
// with each server; a restored server advertises them before handlers are
// configured, once; configuring handlers stamps every stored server.
func TestElicitationPersisted(t *testing.T) {
	decline := func(context.Context, *input.ElicitationRequest, string) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	for _, era := range []struct {
		name string
		mode mcptest.Mode
	}{{"2026-07-28", mcptest.Stateless}, {"2025-11-25", mcptest.Stateful}} {
		t.Run(era.name, func(t *testing.T) {
			t.Parallel()
			hs := mcptest.Serve(t, era.mode, capsServer)
			path := filepath.Join(t.TempDir(), "agent.db")
			ctx := testCtx(t)
			var id string
			stored := func(st store.Store) (elicitation string, experimental bool) {
				t.Helper()
				row, err := st.GetServer(ctx, "TestAgent/elicit", id)
				if err != nil {
					t.Fatal(err)
				}
				var caps mcp.ClientCapabilities
				if len(row.Options.Capabilities) > 0 {
					if err := json.Unmarshal(row.Options.Capabilities, &caps); err != nil {
						t.Fatalf("stored capabilities %s: %v", row.Options.Capabilities, err)
					}
				}
				return modes(caps.Elicitation), caps.Experimental["x-test"] != nil
			}
			seen := func(a *agent.Agent) string {
				t.Helper()
				res, err := a.Manager().CallTool(ctx, id, "caps", map[string]any{}, nil)
				if err != nil {
					t.Fatal(err)
				}
				return res.Content[0].(*mcp.TextContent).Text
			}
			restart := func(a *agent.Agent, st store.Store) (*agent.Agent, store.Store) {
				t.Helper()
				if err := a.Close(ctx); err != nil {
					t.Fatal(err)
				}
				st.Close()
				// A legacy server that forgot the session: the restored
				// connection makes a fresh handshake.
				hs.ExpireSessions()
				st = openSQLite(t, path)
				a = openAgent(t, st, "elicit", nil)
				a.WaitForConnections(ctx)
				return a, st
			}

			// Handlers first, then the server: both modes, stamped.
			st := openSQLite(t, path)
			a, err := agent.Open(ctx, st, "TestAgent", "elicit", nil)
			if err != nil {
				t.Fatal(err)
			}
			a.Manager().ConfigureElicitationHandlers(&input.ElicitationHandlers{Form: decline, URL: decline})
			res, err := a.AddMCPServer(ctx, "Caps", hs.URL, &agent.AddOptions{
				Client: mcpclient.ClientOptions{Capabilities: &mcp.ClientCapabilities{Experimental: map[string]any{"x-test": map[string]any{}}}}})
			if err != nil {
				t.Fatal(err)
			}
			id = res.ID
			a.WaitForConnections(ctx)
			if got := seen(a); got != "form+url" {
				t.Errorf("first session advertised %q", got)
			}
			if e, x := stored(st); e != "form+url" || !x {
				t.Errorf("stored %q (experimental kept: %t), want form+url", e, x)
			}

			// Restored without handlers: the stored modes are advertised,
			// and the stamp is spent.
			a, st = restart(a, st)
			if got := seen(a); got != "form+url" {
				t.Errorf("restored session advertised %q, want the stored form+url", got)
			}
			a.WaitForConnections(ctx)
			if e, x := stored(st); e != "" || !x {
				t.Errorf("after the restored handshake, stored %q (experimental kept: %t), want none", e, x)
			}
			// Configuring handlers stamps every stored server.
			a.Manager().ConfigureElicitationHandlers(&input.ElicitationHandlers{URL: decline})
			a.WaitForConnections(ctx)
			if e, _ := stored(st); e != "url" {
				t.Errorf("after configuring URL, stored %q", e)
			}
			a.Manager().ConfigureElicitationHandlers(nil)
			a.WaitForConnections(ctx)
			if e, _ := stored(st); e != "" {
				t.Errorf("after clearing, stored %q", e)
			}

			// The next restart advertises nothing.
			a, _ = restart(a, st)
			if got := seen(a); got != "" {
				t.Errorf("second restart advertised %q", got)
			}
		})
	}

	// A restore that waits for OAuth does not spend the stamp.
	t.Run("oauth pending", func(t *testing.T) {
		t.Parallel()
		hs := mcptest.Serve(t, mcptest.Stateful, capsServer)
		st := openSQLite(t, "")
		ctx := testCtx(t)
		caps := json.RawMessage(`{"elicitation":{"form":{}}}`)
		if err := st.PutServer(ctx, store.Server{Namespace: "TestAgent/pending", ID: "p", Name: "P", URL: hs.URL,
			CallbackURL: "https://agents.example.com/cb", AuthURL: "https://auth.example.com/authorize?state=x",
			Options: store.ServerOptions{Capabilities: caps}}); err != nil {
			t.Fatal(err)
		}
		a := openAgent(t, st, "pending", nil)
		a.WaitForConnections(ctx)
		if info, _ := a.Manager().Server("p"); modes(info.Elicitation) != "form" {
			t.Errorf("seed %+v", info.Elicitation)
		}
		row, _ := st.GetServer(ctx, "TestAgent/pending", "p")
		if string(row.Options.Capabilities) != string(caps) {
			t.Errorf("stored %s, want %s", row.Options.Capabilities, caps)
		}
	})
}
