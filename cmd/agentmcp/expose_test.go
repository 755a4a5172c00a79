package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
)

// TestExpose: expose prints, replaces and clears an agent's exposure rules,
// on a database and through a running serve (which sees the rules set on
// its database before it started); a bad pattern is a usage error naming
// it.
func TestExpose(t *testing.T) {
	t.Setenv(envServer, "")
	t.Setenv(envToken, "")
	db := filepath.Join(t.TempDir(), "agentmcp.db")
	_, hs := serve(t, mcptest.Stateless)
	runCmd(t, "add", "--db", db, "--id", "docs", "docs", hs.URL).mustSucceed(t)

	r := runCmd(t, "expose", "--db", db)
	r.mustSucceed(t)
	if want := "agent agentmcp/default exposes all its servers and tools (no rules)\n"; r.stdout != want {
		t.Fatalf("expose without rules:\n%s\nwant:\n%s", r.stdout, want)
	}
	r = runCmd(t, "expose", "--db", db, "--allow", "docs", "--allow", "github/search_*", "--deny", "*/delete_*")
	r.mustSucceed(t)
	want := "allow docs\nallow github/search_*\ndeny  */delete_*\n"
	if r.stdout != want {
		t.Fatalf("expose --allow --deny:\n%s\nwant:\n%s", r.stdout, want)
	}

	bad := runCmd(t, "expose", "--db", db, "--deny", "docs/")
	if line := bad.errorLine(t, exitUsage); !strings.Contains(line, `deny pattern "docs/": no tool part`) {
		t.Errorf("bad pattern: %s", line)
	}
	if line := runCmd(t, "expose", "--db", db, "--clear", "--deny", "x").errorLine(t, exitUsage); !strings.Contains(line, "not both") {
		t.Errorf("--clear with --deny: %s", line)
	}
	if line := runCmd(t, "expose", "--db", db, "--agent", "nobody/here").errorLine(t, exitFailure); !strings.Contains(line, "there is no agent nobody/here") {
		t.Errorf("unknown agent: %s", line)
	}

	s := startServe(t, "--db", db)
	r = runCmd(t, "expose", "--server", s.base)
	r.mustSucceed(t)
	if r.stdout != want {
		t.Fatalf("expose through serve:\n%s\nwant:\n%s", r.stdout, want)
	}
	r = runCmd(t, "expose", "--server", s.base, "--deny", "docs", "--json")
	r.mustSucceed(t)
	var got struct{ Allow, Deny []string }
	decode(t, r.stdout, &got)
	if diff := cmp.Diff(struct{ Allow, Deny []string }{[]string{}, []string{"docs"}}, got); diff != "" {
		t.Fatalf("expose --json through serve (-want +got):\n%s", diff)
	}
	if line := runCmd(t, "expose", "--server", s.base, "--allow", "Docs").errorLine(t, exitUsage); !strings.Contains(line, "lower-case") {
		t.Errorf("bad pattern through serve: %s", line)
	}
	r = runCmd(t, "expose", "--server", s.base, "--clear")
	r.mustSucceed(t)
	if !strings.Contains(r.stdout, "no rules") {
		t.Fatalf("expose --clear: %s", r.stdout)
	}
}
