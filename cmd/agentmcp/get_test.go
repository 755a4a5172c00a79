package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
)

// TestGet: get shows one server: its state, how it is reached, what it
// said in its handshake (name, version, capabilities, instructions), its
// session and its tool count; --json is the API's ServerState.
func TestGet(t *testing.T) {
	t.Setenv("AGENTMCP_SECRET_KEY", "")
	t.Setenv(envToken, "")
	t.Setenv(envServer, "")
	srv := mcp.NewServer(&mcp.Implementation{Name: "docs-server", Version: "1.2.3"},
		&mcp.ServerOptions{Instructions: "Search the docs first.\nThen read a page."})
	for _, name := range []string{"search", "read"} {
		srv.AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
	}
	url := serveServer(t, mcptest.Stateful, srv).URL
	db := filepath.Join(t.TempDir(), "agentmcp.db")
	s := startServe(t, "--db", db)
	runCmd(t, "add", "--server", s.base, "Docs", url).mustSucceed(t)
	if line := runCmd(t, "get", "--server", s.base, "nope").errorLine(t, exitFailure); !strings.Contains(line, `no server "nope"`) {
		t.Errorf("unknown server: %s", line)
	}

	for i, target := range [][]string{{"--server", s.base}, {"--db", db}} {
		if i == 1 {
			s.stop() // then the database directly
		}
		r := runCmd(t, append([]string{"get", "Docs"}, target...)...)
		r.mustSucceed(t)
		for _, want := range []string{
			"Docs (id docs)\n",
			"  state:        ready\n",
			"  transport:    streamable-http, protocol ",
			"  url:          " + url + "\n",
			"  server:       docs-server 1.2.3\n",
			"  session:      live\n",
			"  tools:        2\n",
			"  capabilities: logging, tools (listChanged)\n",
			"  instructions:\n    Search the docs first.\n    Then read a page.\n",
		} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("get does not show %q:\n%s", want, r.stdout)
			}
		}
		r = runCmd(t, append([]string{"get", "--json", "docs"}, target...)...)
		r.mustSucceed(t)
		var st api.ServerState
		if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
			t.Fatal(err)
		}
		if st.ID != "docs" || st.Name != "Docs" || st.Session != api.SessionLive || st.ToolCount != 2 ||
			st.ServerInfo == nil || st.ServerInfo.Version != "1.2.3" || !strings.Contains(string(st.Capabilities), `"tools":`) {
			t.Errorf("get --json: %s", r.stdout)
		}
	}
}
