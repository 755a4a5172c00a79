package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
)

// TestPolicyCommand: policy prints the policy, sets a preset or a file,
// refuses a bad file with what is wrong, on a database and through serve;
// approvals lists an ask, and deny answers it.
func TestPolicyCommand(t *testing.T) {
	t.Setenv(envServer, "")
	t.Setenv(envToken, "")
	dir := t.TempDir()
	db := filepath.Join(dir, "agentmcp.db")
	srv, hs := serve(t, mcptest.Stateless)
	runCmd(t, "add", "--db", db, "--id", "s", "s", hs.URL).mustSucceed(t)

	r := runCmd(t, "policy", "--db", db)
	r.mustSucceed(t)
	if strings.TrimSpace(r.stdout) != "{\n  \"rules\": []\n}" {
		t.Fatalf("policy of a new agent:\n%s", r.stdout)
	}
	r = runCmd(t, "policy", "--db", db, "preset", "cautious")
	r.mustSucceed(t)
	if !strings.Contains(r.stdout, `"default": "ask"`) || !strings.Contains(r.stdout, `"readOnlyHint": true`) {
		t.Fatalf("policy preset cautious:\n%s", r.stdout)
	}
	if line := runCmd(t, "policy", "--db", db, "preset", "strict").errorLine(t, exitUsage); !strings.Contains(line, `unknown preset "strict"`) {
		t.Errorf("unknown preset: %s", line)
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"rules":[{"match":{"tools":["s/"]},"action":"deny"}]}`), 0o600)
	if line := runCmd(t, "policy", "--db", db, "set", bad).errorLine(t, exitUsage); !strings.Contains(line, `policy rule 0: match.tools[0]: "s/": no tool part`) {
		t.Errorf("bad file: %s", line)
	}
	good := filepath.Join(dir, "policy.json")
	os.WriteFile(good, []byte(`{"default":"allow","rules":[{"match":{"tools":["s/increment"]},"action":"ask"}]}`), 0o600)
	runCmd(t, "policy", "--db", db, "set", good).mustSucceed(t)

	s := startServe(t, "--db", db)
	r = runCmd(t, "policy", "--server", s.base)
	r.mustSucceed(t)
	if !strings.Contains(r.stdout, `"s/increment"`) {
		t.Fatalf("policy through serve:\n%s", r.stdout)
	}
	status, b := postJSON(t, s.base+"/agents/agentmcp/default/servers/s/tools/call", `{"name":"increment","timeoutMs":20}`)
	if status != http.StatusAccepted {
		t.Fatalf("call of an ask tool: %d %s", status, b)
	}
	var accepted api.ApprovalResponse
	if err := json.Unmarshal(b, &accepted); err != nil || accepted.Approval.ID == "" {
		t.Fatalf("202 body %s", b)
	}
	r = runCmd(t, "approvals", "--server", s.base)
	r.mustSucceed(t)
	if !strings.Contains(r.stdout, accepted.Approval.ID) || !strings.Contains(r.stdout, "pending") || !strings.Contains(r.stdout, "s/increment") {
		t.Fatalf("approvals:\n%s", r.stdout)
	}
	r = runCmd(t, "deny", "--server", s.base, "--reason", "no", accepted.Approval.ID)
	r.mustSucceed(t)
	if !strings.Contains(r.stdout, "denied "+accepted.Approval.ID) {
		t.Fatalf("deny: %s", r.stdout)
	}
	if line := runCmd(t, "approve", "--server", s.base, accepted.Approval.ID).errorLine(t, exitFailure); !strings.Contains(line, "denied") {
		t.Errorf("approve after deny: %s", line)
	}
	if n := srv.Increments.Load(); n != 0 {
		t.Fatalf("a denied call ran %d times", n)
	}
}

func postJSON(t *testing.T, url, body string) (int, []byte) {
	t.Helper()
	res, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

// TestApprovalSurvivesKill: a call of an ask tool through the API answers
// 202 with its approval; serve (a process of the built binary) is killed
// with SIGKILL; a new serve on the database lists the approval; approved
// with agentmcp approve, the tool runs exactly once (the test server
// counts its calls) and its result is in the approval.
func TestApprovalSurvivesKill(t *testing.T) {
	t.Setenv("AGENTMCP_SECRET_KEY", "")
	t.Setenv(envToken, "")
	t.Setenv(envServer, "")
	bin := buildBinary(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "agentmcp.db")
	srv, hs := serve(t, mcptest.Stateless)
	runCmd(t, "add", "--db", db, "--id", "s", "s", hs.URL).mustSucceed(t)
	runCmd(t, "policy", "--db", db, "preset", "cautious").mustSucceed(t)

	start := func() (*exec.Cmd, string) {
		t.Helper()
		return startServeProcess(t, bin, "--db", db)
	}
	first, base := start()
	status, b := postJSON(t, base+"/agents/agentmcp/default/servers/s/tools/call", `{"name":"increment","timeoutMs":100}`)
	if status != http.StatusAccepted {
		t.Fatalf("call of an ask tool: %d %s", status, b)
	}
	var accepted api.ApprovalResponse
	if err := json.Unmarshal(b, &accepted); err != nil || accepted.Approval.State != "pending" {
		t.Fatalf("202 body %s", b)
	}
	if err := first.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	first.Wait()

	_, base = start()
	r := runCmd(t, "approvals", "--server", base, "--json")
	r.mustSucceed(t)
	var list api.ApprovalsResponse
	decode(t, r.stdout, &list)
	if len(list.Approvals) != 1 || list.Approvals[0].ID != accepted.Approval.ID || list.Approvals[0].State != "pending" {
		t.Fatalf("approvals after the restart: %s", r.stdout)
	}
	if n := srv.Increments.Load(); n != 0 {
		t.Fatalf("the tool ran %d times before approval", n)
	}
	runCmd(t, "approve", "--server", base, accepted.Approval.ID).mustSucceed(t)
	deadline := time.Now().Add(30 * time.Second)
	var got api.Approval
	for {
		r := runCmd(t, "approvals", "--server", base, "--json")
		r.mustSucceed(t)
		var list api.ApprovalsResponse
		decode(t, r.stdout, &list)
		got = list.Approvals[0]
		if got.State == "done" || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond) // polling another process, within the deadline
	}
	var compact bytes.Buffer
	json.Compact(&compact, got.Result)
	if got.State != "done" || !strings.Contains(compact.String(), `"text":"1"`) {
		t.Fatalf("approval after approve: %+v", got)
	}
	runCmd(t, "approve", "--server", base, accepted.Approval.ID).mustSucceed(t) // a no-op
	if n := srv.Increments.Load(); n != 1 {
		t.Fatalf("the tool ran %d times, want exactly 1", n)
	}
}

// TestApproveDirect: on a database, a call of an ask tool says which
// approval it waits for when its time is up; approvals lists it; approve
// runs the call in this process and prints its result.
func TestApproveDirect(t *testing.T) {
	t.Setenv(envServer, "")
	t.Setenv(envToken, "")
	dir := t.TempDir()
	db := filepath.Join(dir, "agentmcp.db")
	srv, hs := serve(t, mcptest.Stateless)
	runCmd(t, "add", "--db", db, "--id", "s", "s", hs.URL).mustSucceed(t)
	file := filepath.Join(dir, "policy.json")
	os.WriteFile(file, []byte(`{"rules":[{"match":{"tools":["s/increment"]},"action":"ask"}]}`), 0o600)
	runCmd(t, "policy", "--db", db, "set", file).mustSucceed(t)

	r := runCmd(t, "call", "--db", db, "--timeout", "500ms", "s", "increment")
	if r.err == nil || !strings.Contains(r.stderr, "waits for approval ap_") {
		t.Fatalf("call of an ask tool: %+v", r)
	}
	r = runCmd(t, "approvals", "--db", db, "--json")
	r.mustSucceed(t)
	var list api.ApprovalsResponse
	decode(t, r.stdout, &list)
	if len(list.Approvals) != 1 || list.Approvals[0].State != "pending" {
		t.Fatalf("approvals: %s", r.stdout)
	}
	r = runCmd(t, "approve", "--db", db, list.Approvals[0].ID)
	r.mustSucceed(t)
	if !strings.Contains(r.stdout, "approved "+list.Approvals[0].ID) || !strings.Contains(r.stdout, `"text": "1"`) {
		t.Fatalf("approve:\n%s", r.stdout)
	}
	if n := srv.Increments.Load(); n != 1 {
		t.Fatalf("the tool ran %d times, want 1", n)
	}
}
