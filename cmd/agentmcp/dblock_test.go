package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/store"
	"github.com/agentmcp/agentmcp/store/sqlite"
)

// TestServeBesideDBCommand: a command that owns the agents of a SQLite
// database with --db (call, a process of the built binary, running a tool
// that blocks) holds the database's lock: serve on it stops at once,
// before serving, naming that command and its pid; a command that would
// own them too (rm) is refused likewise; ls reads beside it. Once the call
// ended, serve starts.
func TestServeBesideDBCommand(t *testing.T) {
	bin, db := buildForDB(t)
	one, oneHS := serve(t, mcptest.Stateless)
	_, twoHS := serve(t, mcptest.Stateless)
	runCmd(t, "add", "--db", db, "--id", "one", "one", oneHS.URL).mustSucceed(t)
	runCmd(t, "add", "--db", db, "--id", "two", "two", twoHS.URL).mustSucceed(t)

	// A call with --db owns the agents while it runs.
	call := exec.Command(bin, "call", "--db", db, "one", "slow")
	var callOut, callErr bytes.Buffer
	call.Stdout, call.Stderr = &callOut, &callErr
	if err := call.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		call.Process.Kill()
		call.Wait()
	})
	waitFor(t, one.SlowStarted, "the call --db to start")
	want := fmt.Sprintf("agentmcp: database %s is in use by agentmcp call (pid %d), which opened its agents directly (--db): start serve once it ends", db, call.Process.Pid)
	if got := serveRefused(t, db); got != want {
		t.Errorf("serve beside call --db: %q, want %q", got, want)
	}
	want = fmt.Sprintf("agentmcp: database %s is in use by agentmcp call (pid %d), which owns its agents: try again once it ends", db, call.Process.Pid)
	if got := runCmd(t, "rm", "--db", db, "two").errorLine(t, exitFailure); got != want {
		t.Errorf("rm --db beside call --db: %q, want %q", got, want)
	}
	r := runCmd(t, "ls", "--db", db)
	r.mustSucceed(t)
	if !strings.Contains(r.stdout, "two") {
		t.Errorf("ls --db beside call --db: %q", r.stdout)
	}
	one.ReleaseSlow()
	if err := call.Wait(); err != nil || !strings.Contains(callOut.String(), "released") {
		t.Fatalf("call --db: %v, stdout %q, stderr %q", err, callOut.String(), callErr.String())
	}

	if res := startServe(t, "--db", db).stop(); res.err != nil {
		t.Fatalf("serve once call --db ended: %v, stderr %q", res.err, res.stderr)
	}
}

// TestDBBesideServe: beside a running serve (a process of the built
// binary) that is running an approved call, add --db stores its server
// and hands it over without settling anything (the approved call is not
// marked interrupted: it ends done, with its result), ls and approvals
// read the database, and every command that would own the agents is
// refused with the serve's pid and the --server to use instead; the
// commands that read run.
func TestDBBesideServe(t *testing.T) {
	bin, db := buildForDB(t)
	one, oneHS := serve(t, mcptest.Stateless)
	two, twoHS := serve(t, mcptest.Stateless)
	_, threeHS := serve(t, mcptest.Stateless)
	_, fourHS := serve(t, mcptest.Stateless)
	runCmd(t, "add", "--db", db, "--id", "one", "one", oneHS.URL).mustSucceed(t)
	runCmd(t, "add", "--db", db, "--id", "two", "two", twoHS.URL).mustSucceed(t)
	pol := filepath.Join(t.TempDir(), "policy.json")
	os.WriteFile(pol, []byte(`{"default":"ask","rules":[]}`), 0o600)
	runCmd(t, "policy", "--db", db, "set", pol).mustSucceed(t)

	// Serve runs an approved call.
	served, base := startServeProcess(t, bin, "--db", db)
	status, b := postJSON(t, base+"/agents/agentmcp/default/servers/two/tools/call", `{"name":"slow","timeoutMs":100}`)
	if status != http.StatusAccepted {
		t.Fatalf("call of an ask tool: %d %s", status, b)
	}
	var accepted api.ApprovalResponse
	if err := json.Unmarshal(b, &accepted); err != nil || accepted.Approval.State != "pending" {
		t.Fatalf("202 body %s", b)
	}
	id := accepted.Approval.ID
	runCmd(t, "approve", "--server", base, id).mustSucceed(t)
	waitFor(t, two.SlowStarted, "the approved call to start")

	r := runCmd(t, "add", "--db", db, "three", threeHS.URL)
	r.mustSucceed(t)
	tookIt := fmt.Sprintf("agentmcp serve (pid %d, %s) took the change in", served.Process.Pid, base)
	if !strings.Contains(r.stdout, tookIt) {
		t.Errorf("add --db beside serve: %q, want %q in it", r.stdout, tookIt)
	}
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	os.WriteFile(cfg, []byte(`{"mcpServers": {"four": {"url": "`+fourHS.URL+`"}}}`), 0o600)
	r = runCmd(t, "import", "--db", db, cfg)
	r.mustSucceed(t)
	if !strings.Contains(r.stdout, tookIt) {
		t.Errorf("import --db beside serve: %q, want %q in it", r.stdout, tookIt)
	}
	r = runCmd(t, "ls", "--db", db)
	r.mustSucceed(t)
	if !strings.Contains(r.stdout, "three") || !strings.Contains(r.stdout, "four") {
		t.Errorf("ls --db beside serve: %q", r.stdout)
	}
	if got := approvalOf(t, "--db", db); got.State != "approved" {
		t.Errorf("approvals --db beside serve running the approved call: %+v", got)
	}
	two.ReleaseSlow()
	var got api.Approval
	pollFor(t, "the approved call's outcome", func() bool {
		got = approvalOf(t, "--server", base)
		return got.State != "approved"
	})
	if got.State != "done" || got.Code != "" || !strings.Contains(string(got.Result), "released") {
		t.Fatalf("the approved call that serve ran beside the commands with --db: %+v", got)
	}

	want := fmt.Sprintf("agentmcp: database %s is in use by agentmcp serve (pid %d, %s), which owns its agents: use --server %s, or stop it first", db, served.Process.Pid, base, base)
	for _, args := range [][]string{
		{"call", "--db", db, "one", "echo", "--args", `{"text":"hi"}`},
		{"tools", "--db", db},
		{"get", "--db", db, "one"},
		{"ls", "--db", db, "--connect"},
		{"rm", "--db", db, "three"},
		{"reconnect", "--db", db, "one"},
		{"approve", "--db", db, id},
		{"deny", "--db", db, id},
		{"policy", "--db", db, "preset", "open"},
		{"expose", "--db", db, "--clear"},
		{"pins", "--db", db, "accept", "one", "echo"},
	} {
		if got := runCmd(t, args...).errorLine(t, exitFailure); got != want {
			t.Errorf("%s beside serve: %q, want %q", strings.Join(args, " "), got, want)
		}
	}
	for _, args := range [][]string{
		{"policy", "--db", db},
		{"expose", "--db", db},
		{"pins", "--db", db},
		{"tasks", "--db", db},
		{"audit", "--db", db},
	} {
		runCmd(t, args...).mustSucceed(t)
	}
	if one.Increments.Load() != 0 {
		t.Errorf("a refused command called a tool")
	}
}

// buildForDB builds the binary and returns it with a database path, both
// in a directory of the test's.
func buildForDB(t *testing.T) (bin, db string) {
	t.Helper()
	t.Setenv("AGENTMCP_SECRET_KEY", "")
	t.Setenv(envToken, "")
	t.Setenv(envServer, "")
	return buildBinary(t), filepath.Join(t.TempDir(), "agentmcp.db")
}

// approvalOf returns the one approval of the default agent, as agentmcp
// approvals lists it with the target flags tf.
func approvalOf(t *testing.T, tf ...string) api.Approval {
	t.Helper()
	r := runCmd(t, append([]string{"approvals", "--json"}, tf...)...)
	r.mustSucceed(t)
	var list api.ApprovalsResponse
	decode(t, r.stdout, &list)
	if len(list.Approvals) != 1 {
		t.Fatalf("approvals %v: %s", tf, r.stdout)
	}
	return list.Approvals[0]
}

// serveRefused runs serve on db in this process and returns its error
// line; a serve that starts instead is stopped, failing the test.
func serveRefused(t *testing.T, db string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pr, pw := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan error, 1)
	go func() {
		err := run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--db", db}, pw, &stderr)
		pw.Close()
		done <- err
	}()
	var stdout strings.Builder
	for lines := bufio.NewScanner(pr); lines.Scan(); {
		stdout.WriteString(lines.Text() + "\n")
		if strings.Contains(lines.Text(), "dashboard at") {
			cancel()
		}
	}
	err := <-done
	if stdout.Len() > 0 {
		t.Errorf("serve started beside the owner: %q", stdout.String())
	}
	r := result{stderr: stderr.String(), err: err, code: exitCode(err)}
	return r.errorLine(t, exitFailure)
}

// TestDBReadsBesideOwner: approvals --db beside the process that holds the
// database's lock reads it and writes nothing: an approval past its expiry
// is shown expired but left pending in the database, and one ended long
// ago is listed, not pruned; both are the owner's to settle. With nobody
// holding the lock, the same command settles them as before.
func TestDBReadsBesideOwner(t *testing.T) {
	t.Setenv("AGENTMCP_SECRET_KEY", "")
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "agentmcp.db")
	_, hs := serve(t, mcptest.Stateless)
	runCmd(t, "add", "--db", db, "--id", "one", "one", hs.URL).mustSucceed(t)
	st, err := sqlite.Open(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now().UTC()
	const ns = "agentmcp/default"
	due := store.Approval{Namespace: ns, ID: "ap_due", ServerID: "one", Tool: "echo", Arguments: json.RawMessage(`{}`), Caller: "api",
		State: store.ApprovalPending, RequestedAt: now.Add(-2 * time.Hour), ExpiresAt: now.Add(-time.Hour)}
	old := store.Approval{Namespace: ns, ID: "ap_old", ServerID: "one", Tool: "echo", Arguments: json.RawMessage(`{}`), Caller: "api",
		State: store.ApprovalDenied, RequestedAt: now.Add(-60 * 24 * time.Hour), ExpiresAt: now.Add(-59 * 24 * time.Hour), DecidedAt: now.Add(-60 * 24 * time.Hour)}
	for _, ap := range []store.Approval{due, old} {
		if err := st.PutApproval(ctx, ap); err != nil {
			t.Fatal(err)
		}
	}
	states := func() map[string]string {
		t.Helper()
		rows, err := st.ListApprovals(ctx, ns)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, r := range rows {
			m[r.ID] = r.State
		}
		return m
	}
	listed := func() map[string]string {
		t.Helper()
		r := runCmd(t, "approvals", "--db", db, "--json")
		r.mustSucceed(t)
		var list api.ApprovalsResponse
		decode(t, r.stdout, &list)
		m := map[string]string{}
		for _, ap := range list.Approvals {
			m[ap.ID] = ap.State
		}
		return m
	}

	release, err := sqlite.LockFileAs(db, serveHolder) // as serve holds it
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"ap_due": "expired", "ap_old": "denied"}, listed()); diff != "" {
		t.Errorf("approvals --db beside the owner (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"ap_due": "pending", "ap_old": "denied"}, states()); diff != "" {
		t.Errorf("the database after approvals --db beside the owner (-want +got):\n%s", diff)
	}
	release()

	if diff := cmp.Diff(map[string]string{"ap_due": "expired"}, listed()); diff != "" {
		t.Errorf("approvals --db with no owner (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"ap_due": "expired"}, states()); diff != "" {
		t.Errorf("the database after approvals --db with no owner (-want +got):\n%s", diff)
	}
}

// TestServeWaitsForProbe: a command that only reads takes the lock for an
// instant to learn whether another process holds it; serve starting in
// that instant tries again rather than stop. Here the lock is held, as by
// such a command, until serve has bound its address (it locks right
// after), then released: serve starts.
func TestServeWaitsForProbe(t *testing.T) {
	t.Setenv("AGENTMCP_SECRET_KEY", "")
	t.Setenv(envToken, "")
	db := filepath.Join(t.TempDir(), "agentmcp.db")
	release, err := sqlite.LockFileAs(db, "agentmcp ls")
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + freePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan error, 1)
	go func() {
		err := run(ctx, []string{"serve", "--addr", addr, "--db", db}, pw, &stderr)
		pw.Close()
		done <- err
	}()
	pollFor(t, "serve to bind its address", func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	release()
	started := false
	for lines := bufio.NewScanner(pr); lines.Scan(); {
		if strings.Contains(lines.Text(), "dashboard at") {
			started = true
			cancel()
		}
	}
	if err := <-done; err != nil || !started {
		t.Fatalf("serve once the probe ended: started %v, err %v, stderr %q", started, err, stderr.String())
	}
}
