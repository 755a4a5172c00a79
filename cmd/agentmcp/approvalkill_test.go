package main

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
)

// TestApprovedCallKilled: an approved call that runs when serve (a process
// of the built binary) is killed with SIGKILL is never run again: the
// next serve on the database marks its approval done, with code
// interrupted and the reason, and the tool (which counts its starts) is
// not called a second time.
func TestApprovedCallKilled(t *testing.T) {
	t.Setenv("AGENTMCP_SECRET_KEY", "")
	t.Setenv(envToken, "")
	t.Setenv(envServer, "")
	bin := buildBinary(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "agentmcp.db")
	srv, hs := serve(t, mcptest.Stateless)
	runCmd(t, "add", "--db", db, "--id", "s", "s", hs.URL).mustSucceed(t)
	pol := filepath.Join(dir, "policy.json")
	os.WriteFile(pol, []byte(`{"default":"ask","rules":[]}`), 0o600)
	runCmd(t, "policy", "--db", db, "set", pol).mustSucceed(t)

	start := func() (*exec.Cmd, string) {
		t.Helper()
		return startServeProcess(t, bin, "--db", db)
	}
	first, base := start()
	status, b := postJSON(t, base+"/agents/agentmcp/default/servers/s/tools/call", `{"name":"slow","timeoutMs":100}`)
	if status != http.StatusAccepted {
		t.Fatalf("call of an ask tool: %d %s", status, b)
	}
	var accepted api.ApprovalResponse
	if err := json.Unmarshal(b, &accepted); err != nil || accepted.Approval.State != "pending" {
		t.Fatalf("202 body %s", b)
	}
	runCmd(t, "approve", "--server", base, accepted.Approval.ID).mustSucceed(t)
	select {
	case <-srv.SlowStarted:
	case <-time.After(30 * time.Second): // a safety timeout
		t.Fatal("the approved call did not start")
	}
	if err := first.Process.Kill(); err != nil { // SIGKILL, while the call runs
		t.Fatal(err)
	}
	first.Wait()

	_, base = start()
	deadline := time.Now().Add(30 * time.Second)
	var got api.Approval
	for {
		r := runCmd(t, "approvals", "--server", base, "--json")
		r.mustSucceed(t)
		var list api.ApprovalsResponse
		decode(t, r.stdout, &list)
		if len(list.Approvals) != 1 {
			t.Fatalf("approvals after the restart: %s", r.stdout)
		}
		got = list.Approvals[0]
		if got.State == "done" || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond) // polling another process, within the deadline
	}
	if got.State != "done" || got.Code != "interrupted" || got.Error == "" || len(got.Result) != 0 || got.StartedAt == nil {
		t.Fatalf("approval after the restart: %+v", got)
	}
	runCmd(t, "approve", "--server", base, accepted.Approval.ID).mustSucceed(t) // a no-op
	select {
	case <-srv.SlowStarted:
		t.Fatal("the interrupted call ran again")
	default:
	}
}
