package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
)

// auditLines reads agentmcp audit --json's output: decision, tool,
// outcome and approval of each record.
func auditLines(t *testing.T, out string) []string {
	t.Helper()
	lines := []string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var r api.AuditRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		line := r.Decision + " " + r.Server + "/" + r.Tool + " " + r.Caller + " " + r.Outcome
		if r.Approval != "" {
			line += " approval"
		}
		lines = append(lines, line)
	}
	return lines
}

// TestAuditCommand: through serve, three calls (ok, isError, denied) and
// one approved give their records in order in agentmcp audit (--json and
// the table); --follow prints a later call's record as it is written; after
// serve stops, audit --db reads the same records from the database.
func TestAuditCommand(t *testing.T) {
	t.Setenv(envServer, "")
	t.Setenv(envToken, "")
	dir := t.TempDir()
	db := filepath.Join(dir, "agentmcp.db")
	_, hs := serve(t, mcptest.Stateless)
	runCmd(t, "add", "--db", db, "--id", "s", "s", hs.URL).mustSucceed(t)
	policyFile := filepath.Join(dir, "policy.json")
	if err := os.WriteFile(policyFile, []byte(`{"rules": [
		{"match": {"tools": ["s/add"]}, "action": "deny"},
		{"match": {"tools": ["s/increment"]}, "action": "ask"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	runCmd(t, "policy", "--db", db, "set", policyFile).mustSucceed(t)

	s := startServe(t, "--db", db)
	agentURL := s.base + "/agents/agentmcp/default"
	call := agentURL + "/servers/s/tools/call"
	for _, c := range []struct {
		body   string
		status int
	}{
		{`{"name":"echo","arguments":{"text":"hi"}}`, http.StatusOK},
		{`{"name":"fail"}`, http.StatusOK},
		{`{"name":"add","arguments":{"a":1,"b":2}}`, http.StatusForbidden},
	} {
		if status, b := postJSON(t, call, c.body); status != c.status {
			t.Fatalf("call %s: %d %s, want %d", c.body, status, b, c.status)
		}
	}
	status, b := postJSON(t, call, `{"name":"increment","timeoutMs":50}`)
	var accepted api.ApprovalResponse
	if err := json.Unmarshal(b, &accepted); err != nil || status != http.StatusAccepted {
		t.Fatalf("increment: %d %s", status, b)
	}
	runCmd(t, "approve", "--server", s.base, accepted.Approval.ID).mustSucceed(t)
	pollFor(t, "the approved call's end", func() bool {
		r := runCmd(t, "approvals", "--server", s.base, "--json")
		return r.err == nil && strings.Contains(r.stdout, `"state": "done"`)
	})

	want := []string{
		"server_added s/ api ",
		"allowed s/echo api ok",
		"allowed s/fail api is_error",
		"denied s/add api ",
		"asked s/increment api  approval",
		"approved s/increment api  approval",
		"allowed s/increment api ok approval",
	}
	r := runCmd(t, "audit", "--server", s.base, "--json")
	r.mustSucceed(t)
	if diff := cmp.Diff(want, auditLines(t, r.stdout)); diff != "" {
		t.Fatalf("audit --json (-want +got):\n%s", diff)
	}
	r = runCmd(t, "audit", "--server", s.base, "--limit", "2", "s", "increment")
	r.mustSucceed(t)
	if lines := strings.Split(strings.TrimSpace(r.stdout), "\n"); len(lines) != 3 || !strings.HasPrefix(lines[0], "TIME") ||
		!strings.Contains(lines[1], "approved") || !strings.Contains(lines[2], "allowed") || !strings.Contains(lines[2], "s/increment") {
		t.Fatalf("audit --limit 2 s increment:\n%s", r.stdout)
	}
	if line := runCmd(t, "audit", "--server", s.base, "--decision", "maybe").errorLine(t, exitFailure); !strings.Contains(line, "unknown decision") {
		t.Errorf("audit --decision maybe: %s", line)
	}

	// --follow prints the records written after it started.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut lockedBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"audit", "--server", s.base, "--follow", "--interval", "10ms", "--json", "--limit", "1"}, &out, &errOut)
	}()
	pollFor(t, "audit --follow's first line", func() bool { return strings.Count(out.String(), "\n") == 1 })
	if status, b := postJSON(t, call, `{"name":"echo","arguments":{"text":"later"}}`); status != http.StatusOK {
		t.Fatalf("echo: %d %s", status, b)
	}
	pollFor(t, "the later call's record in audit --follow", func() bool { return strings.Count(out.String(), "\n") == 2 })
	cancel()
	if err := <-done; err != nil || errOut.String() != "" {
		t.Fatalf("audit --follow: %v, stderr %q", err, errOut.String())
	}
	if diff := cmp.Diff([]string{"allowed s/increment api ok approval", "allowed s/echo api ok"}, auditLines(t, out.String())); diff != "" {
		t.Fatalf("audit --follow (-want +got):\n%s", diff)
	}
	want = append(want, "allowed s/echo api ok")

	s.stop()
	r = runCmd(t, "audit", "--db", db, "--json", "--limit", "0")
	r.mustSucceed(t)
	if diff := cmp.Diff(want, auditLines(t, r.stdout)); diff != "" {
		t.Fatalf("audit --db after serve stopped (-want +got):\n%s", diff)
	}
}

// pollFor polls cond until it holds, failing after a generous timeout.
func pollFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: timed out", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
