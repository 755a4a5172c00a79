package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/store"
	"github.com/agentmcp/agentmcp/store/sqlite"
)

// keepAwakeAgents returns the agents with a keep-awake server in the
// SQLite database at db.
func keepAwakeAgents(t *testing.T, db string) []string {
	t.Helper()
	st, err := sqlite.Open(t.Context(), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	keys, err := st.ListKeepAwake(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(keys)
	return keys
}

// TestAddKeepAwake: add --keep-awake marks the server keep-awake, on a
// database and through a running serve (AddRequest.KeepAwake), and so
// does import --keep-awake for every server it adds; serve then wakes
// those agents at start.
func TestAddKeepAwake(t *testing.T) {
	t.Setenv(store.EnvSecretKey, "")
	t.Setenv(envServer, "")
	t.Setenv(envToken, "")
	_, hs := serve(t, mcptest.Stateful)
	dir := t.TempDir()
	db := filepath.Join(dir, "agentmcp.db")

	runCmd(t, "add", "--db", db, "--agent", "team/plain", "--id", "s", "s", hs.URL).mustSucceed(t)
	if got := keepAwakeAgents(t, db); len(got) != 0 {
		t.Fatalf("keep-awake agents after a plain add: %v", got)
	}
	r := runCmd(t, "add", "--db", db, "--agent", "team/db", "--keep-awake", "--id", "s", "s", hs.URL)
	r.mustSucceed(t)
	if r.stdout != "added s as s: ready\n" {
		t.Errorf("add --keep-awake: %q", r.stdout)
	}
	// Adding an existing server again with --keep-awake marks it.
	runCmd(t, "add", "--db", db, "--agent", "team/plain", "--keep-awake", "--id", "s", "s", hs.URL).mustSucceed(t)

	cfg := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(cfg, []byte(`{"mcpServers": {"docs": {"url": "`+hs.URL+`"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	r = runCmd(t, "import", "--dry-run", "--keep-awake", cfg)
	r.mustSucceed(t)
	if !strings.HasSuffix(r.stdout, ", auto, keep-awake)\n") {
		t.Errorf("import --dry-run --keep-awake: %q", r.stdout)
	}
	runCmd(t, "import", "--db", db, "--agent", "team/import", "--keep-awake", cfg).mustSucceed(t)

	s := startServe(t, "--db", db)
	r = runCmd(t, "add", "--server", s.base, "--agent", "team/api", "--keep-awake", "--id", "s", "s", hs.URL)
	r.mustSucceed(t)
	s.stop()
	want := []string{"team/api", "team/db", "team/import", "team/plain"}
	if got := keepAwakeAgents(t, db); !slices.Equal(got, want) {
		t.Errorf("keep-awake agents %v, want %v", got, want)
	}

	s = startServe(t, "--db", db)
	if !strings.Contains(s.out.String(), ", 4 kept awake;") {
		t.Errorf("serve on the database: %s", s.out.String())
	}
}
