package main

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
)

// TestAddTrailingSlash: add --db and import of a URL that differs from a
// stored one only by a trailing slash find the stored server, under a
// generated id and under the stable id import gives.
func TestAddTrailingSlash(t *testing.T) {
	_, hs := serve(t, mcptest.Stateful)
	dir := t.TempDir()
	db := filepath.Join(dir, "agentmcp.db")
	added := regexp.MustCompile(`^added s as (\S+): ready\n$`)

	r := runCmd(t, "add", "--db", db, "s", hs.URL)
	r.mustSucceed(t)
	m := added.FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("add: %q", r.stdout)
	}
	r = runCmd(t, "add", "--db", db, "s", hs.URL+"/")
	r.mustSucceed(t)
	if again := added.FindStringSubmatch(r.stdout); again == nil || again[1] != m[1] {
		t.Errorf("add with a trailing slash: %q, want the id %s", r.stdout, m[1])
	}

	for i, u := range []string{hs.URL, hs.URL + "/"} {
		cfg := filepath.Join(dir, "mcp.json")
		os.WriteFile(cfg, []byte(`{"mcpServers": {"docs": {"url": "`+u+`"}}}`), 0o600)
		r = runCmd(t, "import", "--db", db, cfg)
		r.mustSucceed(t)
		if r.stdout != "added docs as docs: ready\n" {
			t.Errorf("import %d (%s): %q", i, u, r.stdout)
		}
	}

	r = runCmd(t, "ls", "--db", db, "--json")
	r.mustSucceed(t)
	var st agent.MCPServersState
	decode(t, r.stdout, &st)
	if len(st.Servers) != 2 {
		t.Errorf("%d servers stored, want 2 (s and docs): %+v", len(st.Servers), st.Servers)
	}
}
