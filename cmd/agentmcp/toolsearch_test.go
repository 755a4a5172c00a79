package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
)

// TestToolsSearch: tools --search prints the matching tools best first,
// on a database and through serve, as a table and as JSON, and refuses
// a search without a query or a --limit without a search.
func TestToolsSearch(t *testing.T) {
	t.Setenv("AGENTMCP_SECRET_KEY", "")
	t.Setenv(envToken, "")
	t.Setenv(envServer, "")
	db := filepath.Join(t.TempDir(), "agentmcp.db")
	for _, name := range []string{"alpha", "beta"} {
		srv := mcptest.NewServer(name)
		if name == "beta" {
			srv.AddTool("translate_subtitles")
		}
		url := mcptest.Serve(t, mcptest.Stateful, func() *mcp.Server { return srv.Server }).URL
		runCmd(t, "add", "--db", db, "--id", name, name, url).mustSucceed(t)
	}
	row := regexp.MustCompile(`(?m)^(\d+\.\d\d)\s+(\w+)\s+(\S+)`)
	check := func(target ...string) {
		t.Helper()
		r := runCmd(t, append([]string{"tools", "--search", "sum of two integers"}, target...)...)
		r.mustSucceed(t)
		rows := row.FindAllStringSubmatch(r.stdout, -1)
		if !strings.HasPrefix(r.stdout, "SCORE") || len(rows) < 2 || rows[0][3] != "add" || rows[1][3] != "add" {
			t.Fatalf("tools --search %v:\n%s", target, r.stdout)
		}
		r = runCmd(t, append([]string{"tools", "--search", "subtitles", "--json", "--limit", "3"}, target...)...)
		r.mustSucceed(t)
		var ms []struct {
			ServerID, Name, Key string
			Score               float64
		}
		if err := json.Unmarshal([]byte(r.stdout), &ms); err != nil || len(ms) != 1 || ms[0].ServerID != "beta" ||
			ms[0].Name != "translate_subtitles" || ms[0].Key != "tool_beta_translate_subtitles" || ms[0].Score <= 0 {
			t.Fatalf("tools --search subtitles --json %v: %v\n%s", target, err, r.stdout)
		}
		r = runCmd(t, append([]string{"tools", "--search", "integers", "alpha"}, target...)...)
		r.mustSucceed(t)
		for _, m := range row.FindAllStringSubmatch(r.stdout, -1) {
			if m[2] != "alpha" {
				t.Errorf("tools --search integers alpha %v: a tool of %s:\n%s", target, m[2], r.stdout)
			}
		}
		r = runCmd(t, append([]string{"tools", "--search", "zebra"}, target...)...)
		r.mustSucceed(t)
		if !strings.Contains(r.stdout, `no tool matches "zebra"`) {
			t.Errorf("tools --search zebra %v: %q", target, r.stdout)
		}
	}
	check("--db", db)
	s := startServe(t, "--db", db)
	check("--server", s.base)

	for _, args := range [][]string{
		{"tools", "--db", db, "--search", " "},
		{"tools", "--db", db, "--limit", "3"},
		{"tools", "--db", db, "--search", "x", "--limit", "0"},
	} {
		r := runCmd(t, args...)
		if line := r.errorLine(t, exitUsage); !strings.Contains(line, "--") {
			t.Errorf("%v: %q", args, line)
		}
	}
}
