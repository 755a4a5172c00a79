package clustertest

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/store"
	"github.com/agentmcp/agentmcp/store/postgres"
)

// TestClusterTaskFailover: a tool call runs as a task on an HTTP server
// when the replica that owns its agent is killed -9. Once the lease of the
// dead replica expires, another replica wakes the agent (the rehoming of
// agents whose owner died with running tasks), resumes polling the task
// from the store, and stores its result when the server finishes it.
// Throughout, no two processes poll the task server at once: the lease
// decides who does. It runs in make test's fast profile (two replicas,
// the fast lease: about ten seconds after the build the package's tests
// share), not in make cluster's run of TestCluster alone.
func TestClusterTaskFailover(t *testing.T) {
	prof := fastProfile
	switch os.Getenv(EnvProfile) {
	case "full":
		prof = fullProfile
	case "fast":
	default:
		t.Skipf("the cluster tests run with make test or make cluster-fast (%s=fast), make cluster (full profile); not in control runs", EnvProfile)
	}
	bin := buildAgentmcp(t)
	dsn := pg.Database(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	st, err := postgres.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	c := newCluster(t, bin, dsn, prof, 2)
	rec := &recorder{c: c, byKey: map[string][]*activity{}}
	rec.finder = &pidFinder{candidates: c.livePids, inode: map[uint64]int{}}
	ts := mcptest.NewTaskServer(true)
	srv := mcptest.ServeHandler(t, rec.wrap("tasks", ts))

	defer func() {
		if t.Failed() || os.Getenv(EnvLogs) != "" {
			t.Logf("replica logs:\n%s", c.logTails(80))
		}
	}()
	for _, r := range c.reps {
		if err := c.startReady(r, time.Minute); err != nil {
			t.Fatal(err)
		}
		c.setPool(r.slot, true)
	}
	hc := &http.Client{Timeout: time.Minute}
	defer hc.CloseIdleConnections()
	ns := namespace(0)
	body := fmt.Sprintf(`{"name":"Tasks","url":%q,"id":"ts"}`, srv.URL)
	if code, data, _, err := c.do(ctx, hc, "POST", agentPath(0)+"/servers", body); err != nil || code/100 != 2 {
		t.Fatalf("adding the task server: %d %s %v", code, data, err)
	}
	if err := waitServerReady(ctx, c, hc, 0, "ts", time.Minute); err != nil {
		t.Fatal(err)
	}

	// The call, held by the API until the task ends or its replica dies.
	go c.do(ctx, hc, "POST", agentPath(0)+"/servers/ts/tools/call", `{"name":"work","timeoutMs":120000}`) //nolint:errcheck // cut short by the kill

	var task store.Task
	waitUntil(t, ctx, "the task stored and polled", func() bool {
		tasks, err := st.ListTasks(ctx, ns)
		if err != nil || len(tasks) != 1 || !slices.Contains(ts.Methods(), "tasks/get") {
			return false
		}
		task = tasks[0]
		return true
	})
	owner, err := st.Resolve(ctx, ns)
	if err != nil || !owner.Live {
		t.Fatalf("owner of %s: %+v, %v", ns, owner, err)
	}
	slot := c.slotOfURL(owner.ClusterURL)
	if slot < 0 {
		t.Fatalf("owner %+v is no replica of the test", owner)
	}
	dead := c.reps[slot]
	deadPid := dead.pid()
	c.setPool(slot, false)
	if err := c.signal(dead, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.waitExit(dead, 30*time.Second); !ok {
		t.Fatal("the killed replica did not exit")
	}
	killed := time.Now()
	polls := len(ts.Methods())

	// Another replica takes the agent over and polls the task again.
	waitUntil(t, ctx, "the task polled after the kill", func() bool {
		return slices.Contains(ts.Methods()[polls:], "tasks/get")
	})
	if now, err := st.Resolve(ctx, ns); err != nil || !now.Live || now.ClusterURL == owner.ClusterURL {
		t.Fatalf("owner after the kill: %+v, %v (before: %+v)", now, err, owner)
	}
	t.Logf("polling resumed %.1fs after the kill", time.Since(killed).Seconds())
	ts.Finish(task.TaskID, "finished after the failover")
	waitUntil(t, ctx, "the result stored", func() bool {
		tasks, err := st.ListTasks(ctx, ns)
		return err == nil && len(tasks) == 1 && tasks[0].Done
	})
	tasks, err := st.ListTasks(ctx, ns)
	if err != nil || tasks[0].Status != "completed" || !strings.Contains(string(tasks[0].Result), "finished after the failover") ||
		tasks[0].Correlation != task.Correlation || tasks[0].ArgumentsHash != task.ArgumentsHash {
		t.Fatalf("stored task %+v, %v", tasks, err)
	}

	// Who polled: the dead replica before the kill, another one after,
	// never two at once.
	if n, examples := rec.duplicates(nil, time.Now()); n != 0 {
		t.Errorf("%d overlapping requests of two processes to the task server, e.g. %+v", n, examples)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var before, after bool
	for _, a := range rec.byKey["tasks"] {
		before = before || a.pid == deadPid
		after = after || (a.pid != deadPid && a.start.After(killed))
	}
	if !before || !after {
		t.Errorf("requests seen from the killed replica: %v, from another after the kill: %v (unattributed: %d)", before, after, rec.unattributed.Load())
	}
}

// waitUntil polls cond until it holds, ctx ending first failing the test:
// for what the replicas do out of the test's sight.
func waitUntil(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
