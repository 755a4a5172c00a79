package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
)

// TestApproveBy: agentmcp approve and deny say who answers: --by, else
// the OS user name; it is the approval's decidedBy and the BY of its
// record in agentmcp audit (the table and --json), through serve and on
// the database; a bad --by is a usage error that answers nothing.
func TestApproveBy(t *testing.T) {
	t.Setenv(envServer, "")
	t.Setenv(envToken, "")
	me := osUserName()
	if me == "" {
		t.Fatal("no OS user name to default --by to")
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "agentmcp.db")
	_, hs := serve(t, mcptest.Stateless)
	runCmd(t, "add", "--db", db, "--id", "s", "s", hs.URL).mustSucceed(t)
	policyFile := filepath.Join(dir, "policy.json")
	if err := os.WriteFile(policyFile, []byte(`{"rules": [{"match": {"tools": ["s/increment"]}, "action": "ask"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	runCmd(t, "policy", "--db", db, "set", policyFile).mustSucceed(t)

	s := startServe(t, "--db", db)
	call := s.base + "/agents/agentmcp/default/servers/s/tools/call"
	ask := func() string {
		t.Helper()
		status, b := postJSON(t, call, `{"name":"increment","timeoutMs":50}`)
		var accepted api.ApprovalResponse
		if err := json.Unmarshal(b, &accepted); err != nil || status != http.StatusAccepted {
			t.Fatalf("increment: %d %s", status, b)
		}
		return accepted.Approval.ID
	}
	decidedBy := func(target []string, id string) string {
		t.Helper()
		r := runCmd(t, append(append([]string{"approvals"}, target...), "--json")...)
		r.mustSucceed(t)
		var list api.ApprovalsResponse
		decode(t, r.stdout, &list)
		for _, ap := range list.Approvals {
			if ap.ID == id {
				return ap.DecidedBy
			}
		}
		t.Fatalf("no approval %s in %s", id, r.stdout)
		return ""
	}
	remote := []string{"--server", s.base}

	first := ask()
	if line := runCmd(t, "approve", "--server", s.base, "--by", "tab\there", first).errorLine(t, exitUsage); !strings.Contains(line, "--by") {
		t.Errorf("approve --by with a tab: %s", line)
	}
	if line := runCmd(t, "deny", "--server", s.base, "--by", strings.Repeat("x", 200), first).errorLine(t, exitUsage); !strings.Contains(line, "--by") {
		t.Errorf("deny --by too long: %s", line)
	}
	runCmd(t, "approve", "--server", s.base, "--by", "Ana Lima", first).mustSucceed(t)
	if got := decidedBy(remote, first); got != "Ana Lima" {
		t.Errorf("approve --by: decidedBy %q", got)
	}
	second := ask()
	runCmd(t, "deny", "--server", s.base, "--reason", "no", second).mustSucceed(t)
	if got := decidedBy(remote, second); got != me {
		t.Errorf("deny without --by: decidedBy %q, want the OS user %q", got, me)
	}
	third := ask()
	runCmd(t, "deny", "--server", s.base, "--by", "", third).mustSucceed(t)
	if got := decidedBy(remote, third); got != "" {
		t.Errorf(`deny --by "": decidedBy %q`, got)
	}

	r := runCmd(t, "audit", "--server", s.base, "--decision", "approved")
	r.mustSucceed(t)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "CALLER  BY") || !strings.Contains(lines[1], "Ana Lima") {
		t.Fatalf("audit --decision approved:\n%s", r.stdout)
	}
	r = runCmd(t, "audit", "--server", s.base, "--decision", "rejected", "--json")
	r.mustSucceed(t)
	var got []string
	for line := range strings.Lines(r.stdout) {
		var rec api.AuditRecord
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		got = append(got, rec.Approval+" "+rec.DecidedBy)
	}
	if len(got) != 2 || got[0] != second+" "+me || got[1] != third+" " {
		t.Errorf("audit --decision rejected --json: %q", got)
	}

	// On the database, with serve stopped.
	fourth := ask()
	s.stop()
	runCmd(t, "deny", "--db", db, "--by", "Bo", fourth).mustSucceed(t)
	if got := decidedBy([]string{"--db", db}, fourth); got != "Bo" {
		t.Errorf("deny --db --by: decidedBy %q", got)
	}
	r = runCmd(t, "audit", "--db", db, "--decision", "rejected", "--limit", "1")
	r.mustSucceed(t)
	if !strings.Contains(r.stdout, " Bo ") {
		t.Errorf("audit --db:\n%s", r.stdout)
	}
}
