package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/store"
	"github.com/agentmcp/agentmcp/store/postgres"
)

// TestPostgresBesideReplica: beside an agentmcp serve replica (--cluster,
// in this process) that owns the agent (it is awake there), every
// --postgres command that would act as the agent's owner is refused,
// naming the replica, and changes nothing; the commands that read run and
// write nothing: an approval past its expiry is listed expired but left
// pending in the database, the replica's to settle. Once the replica has
// left (releasing its lease), the same commands run as before.
func TestPostgresBesideReplica(t *testing.T) {
	t.Setenv("AGENTMCP_SECRET_KEY", "")
	t.Setenv(envToken, "")
	t.Setenv(envServer, "")
	ctx := context.Background()
	dsn := pg.Database(t)
	_, oneHS := serve(t, mcptest.Stateless)
	_, twoHS := serve(t, mcptest.Stateless)
	runCmd(t, "add", "--postgres", dsn, "--id", "one", "one", oneHS.URL).mustSucceed(t)
	pol := filepath.Join(t.TempDir(), "policy.json")
	os.WriteFile(pol, []byte(`{"default":"ask","rules":[]}`), 0o600)

	st, err := postgres.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const ns = "agentmcp/default"
	now := time.Now().UTC()
	due := store.Approval{Namespace: ns, ID: "ap_due", ServerID: "one", Tool: "echo", Arguments: json.RawMessage(`{}`), Caller: "api",
		State: store.ApprovalPending, RequestedAt: now.Add(-2 * time.Hour), ExpiresAt: now.Add(-time.Hour)}
	if err := st.PutApproval(ctx, due); err != nil {
		t.Fatal(err)
	}
	stored := func() (servers []string, approvals map[string]string) {
		t.Helper()
		rows, err := st.ListServers(ctx, ns)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			servers = append(servers, r.ID)
		}
		aps, err := st.ListApprovals(ctx, ns)
		if err != nil {
			t.Fatal(err)
		}
		approvals = map[string]string{}
		for _, r := range aps {
			approvals[r.ID] = r.State
		}
		return servers, approvals
	}

	replica := startServe(t, "--postgres", dsn, "--cluster", "--cluster-addr", "127.0.0.1:0", "--cluster-key", "0123456789abcdef-test")
	runCmd(t, "ls", "--server", replica.base).mustSucceed(t) // wakes the agent there
	owner, err := st.Resolve(ctx, ns)
	if err != nil || !owner.Live || owner.Replica == "" {
		t.Fatalf("the agent's lease once awake on the replica: %+v, %v", owner, err)
	}

	r := runCmd(t, "approvals", "--postgres", dsn, "--json")
	r.mustSucceed(t)
	var list api.ApprovalsResponse
	decode(t, r.stdout, &list)
	if len(list.Approvals) != 1 || list.Approvals[0].State != "expired" {
		t.Errorf("approvals --postgres beside the replica: %s", r.stdout)
	}
	r = runCmd(t, "ls", "--postgres", dsn)
	r.mustSucceed(t)
	if !strings.Contains(r.stdout, "one") {
		t.Errorf("ls --postgres beside the replica: %q", r.stdout)
	}
	if _, approvals := stored(); !cmp.Equal(map[string]string{"ap_due": "pending"}, approvals) {
		t.Errorf("the stored approvals after approvals --postgres beside the replica: %v, want ap_due pending", approvals)
	}
	want := fmt.Sprintf("agentmcp: agent %s is owned by agentmcp serve replica %s (cluster listener %s), where it is awake: use --server with the address of any replica, which sends the command to it, or try again once the agent hibernates",
		ns, owner.Replica, owner.ClusterURL)
	for _, args := range [][]string{
		{"rm", "one"},
		{"reconnect", "one"},
		{"tools"},
		{"call", "one", "echo"},
		{"get", "one"},
		{"ls", "--connect"},
		{"add", "--id", "two", "two", twoHS.URL},
		{"policy", "set", pol},
		{"approve", "ap_due"},
	} {
		r := runCmd(t, append(args, "--postgres", dsn)...)
		if got := r.errorLine(t, exitFailure); got != want {
			t.Errorf("%s --postgres beside the replica: %q, want %q", strings.Join(args, " "), got, want)
		}
	}

	servers, approvals := stored()
	if diff := cmp.Diff([]string{"one"}, servers); diff != "" {
		t.Errorf("the stored servers after the commands beside the replica (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"ap_due": "pending"}, approvals); diff != "" {
		t.Errorf("the stored approvals after the commands beside the replica (-want +got):\n%s", diff)
	}

	if res := replica.stop(); res.err != nil {
		t.Fatalf("serve: %v, stderr %q", res.err, res.stderr)
	}
	runCmd(t, "approvals", "--postgres", dsn, "--json").mustSucceed(t)
	runCmd(t, "add", "--postgres", dsn, "--id", "two", "two", twoHS.URL).mustSucceed(t)
	runCmd(t, "rm", "--postgres", dsn, "one").mustSucceed(t)
	servers, approvals = stored()
	if diff := cmp.Diff([]string{"two"}, servers); diff != "" {
		t.Errorf("the stored servers once the replica left (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"ap_due": "expired"}, approvals); diff != "" {
		t.Errorf("the stored approvals once the replica left (-want +got):\n%s", diff)
	}
}

// TestPostgresCommandHoldsLease: a --postgres command acting as the owner
// of an agent nobody owns (call, running a tool that blocks) holds the
// agent's lease while it runs: a replica cannot claim the agent, no
// replica sees the command as one to place agents on (it is not live),
// and another owning command is refused naming it. When the call ends,
// the lease is released and the command's row is gone: the replica
// claims the agent.
func TestPostgresCommandHoldsLease(t *testing.T) {
	t.Setenv("AGENTMCP_SECRET_KEY", "")
	ctx := context.Background()
	dsn := pg.Database(t)
	one, oneHS := serve(t, mcptest.Stateless)
	runCmd(t, "add", "--postgres", dsn, "--id", "one", "one", oneHS.URL).mustSucceed(t)
	st, err := postgres.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const ns = "agentmcp/default"
	if err := st.RegisterReplica(ctx, "r-test", "http://127.0.0.1:1", "test", time.Hour); err != nil {
		t.Fatal(err)
	}

	called := make(chan result, 1)
	go func() { called <- runCmd(t, "call", "--postgres", dsn, "one", "slow") }()
	waitFor(t, one.SlowStarted, "the call --postgres to start")
	owner, err := st.Resolve(ctx, ns)
	if err != nil || !owner.Live || !strings.HasPrefix(owner.Replica, "cmd-call-") || owner.ClusterURL != "" {
		t.Errorf("the agent's lease while call --postgres runs: %+v, %v", owner, err)
	}
	if _, ok, err := st.Claim(ctx, ns, "r-test"); ok || err != nil {
		t.Errorf("a replica's claim while call --postgres runs: %v, %v; want false", ok, err)
	}
	replicas, err := st.LiveReplicas(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range replicas {
		if r.ID == owner.Replica && r.State != "draining" {
			t.Errorf("the row of call --postgres: %+v, want draining (no agent placed on it)", r)
		}
	}
	want := fmt.Sprintf("agentmcp: agent %s is in use by a terminal command with --postgres (%s), which owns it: try again once it ends", ns, owner.Replica)
	if got := runCmd(t, "rm", "--postgres", dsn, "one").errorLine(t, exitFailure); got != want {
		t.Errorf("rm --postgres beside call --postgres: %q, want %q", got, want)
	}

	one.ReleaseSlow()
	if r := <-called; r.err != nil || !strings.Contains(r.stdout, "released") {
		t.Fatalf("call --postgres: %v, stdout %q, stderr %q", r.err, r.stdout, r.stderr)
	}
	if owner, err := st.Resolve(ctx, ns); err != nil || owner.Replica != "" {
		t.Errorf("the agent's lease once call --postgres ended: %+v, %v; want none", owner, err)
	}
	if replicas, err := st.LiveReplicas(ctx); err != nil || len(replicas) != 1 || replicas[0].ID != "r-test" {
		t.Errorf("the replicas once call --postgres ended: %+v, %v; want r-test alone", replicas, err)
	}
	if _, ok, err := st.Claim(ctx, ns, "r-test"); !ok || err != nil {
		t.Errorf("a replica's claim once call --postgres ended: %v, %v; want true", ok, err)
	}
}
