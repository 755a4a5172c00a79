package main

import (
	"path/filepath"
	"regexp"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/internal/mcptest"
)

// TestToolsSorted: tools lists by server name, then tool name, whatever
// order the servers were added and list their tools in.
func TestToolsSorted(t *testing.T) {
	t.Setenv(envServer, "")
	db := filepath.Join(t.TempDir(), "agentmcp.db")
	for _, name := range []string{"zeta", "alpha"} {
		srv := mcptest.NewServer(name)
		srv.AddTool("aaa-late") // sorts first, listed last
		url := mcptest.Serve(t, mcptest.Stateful, func() *mcp.Server { return srv.Server }).URL
		runCmd(t, "add", "--db", db, "--id", "id-"+name, name, url).mustSucceed(t)
	}
	r := runCmd(t, "tools", "--db", db)
	r.mustSucceed(t)
	var got []string
	for _, m := range regexp.MustCompile(`(?m)^(id-\w+)\s+(\S+)`).FindAllStringSubmatch(r.stdout, -1) {
		got = append(got, m[1]+" "+m[2])
	}
	want := []string{"id-alpha aaa-late", "id-alpha add", "id-alpha echo", "id-alpha fail", "id-alpha increment", "id-alpha progress", "id-alpha slow",
		"id-zeta aaa-late", "id-zeta add", "id-zeta echo", "id-zeta fail", "id-zeta increment", "id-zeta progress", "id-zeta slow"}
	if len(got) != len(want) {
		t.Fatalf("tools:\n%s", r.stdout)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("row %d: %q, want %q\n%s", i, got[i], want[i], r.stdout)
		}
	}
}
