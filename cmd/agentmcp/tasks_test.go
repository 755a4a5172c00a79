package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/api/client"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
)

// waitTaskServer waits, waking at each change of ts and every few
// milliseconds (serve's writes are not ts's changes), until cond holds.
func waitTaskServer(t *testing.T, ts *mcptest.TaskServer, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ts.Changed():
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s; the server saw %v", what, ts.Methods())
		}
	}
}

// TestTasksThroughServe: agentmcp call on a tool that runs as a task
// prints the task's id on stderr and its status messages as progress,
// then the result; one interrupted leaves its task running and says how
// to fetch it; agentmcp tasks lists them, agentmcp tasks ID shows one with
// its result, agentmcp tasks cancel ID cancels one on its server.
func TestTasksThroughServe(t *testing.T) {
	ts := mcptest.NewTaskServer(false)
	hs := mcptest.ServeHandler(t, ts)
	s := serveWith(t, "ts", hs.URL)

	done := make(chan result, 1)
	go func() { done <- runCmd(t, "call", "--server", s.base, "ts", "work", "--args", `{"n":1}`) }()
	waitTaskServer(t, ts, "the first task", func() bool { return len(ts.Tasks()) == 1 })
	first := ts.Tasks()[0]
	waitTaskServer(t, ts, "a poll", func() bool { return slices.Contains(ts.Methods(), "tasks/get") })
	ts.SetStatus(first, "reading sources")
	n := len(ts.Methods())
	waitTaskServer(t, ts, "the status polled", func() bool { return len(ts.Methods()) > n })
	ts.Finish(first, "research done")
	r := <-done
	if r.err != nil || !strings.Contains(r.stdout, "research done") {
		t.Fatalf("call: %v\nstdout %s\nstderr %s", r.err, r.stdout, r.stderr)
	}
	id := "ts:" + first
	if want := `{"type":"task","tool":"work","id":"` + id + `"}`; !strings.Contains(r.stderr, want+"\n") {
		t.Errorf("stderr %q, want the line %s", r.stderr, want)
	}
	if !strings.Contains(r.stderr, `"message":"reading sources"`) {
		t.Errorf("stderr %q, want the status message as progress", r.stderr)
	}

	// Interrupted (as by Ctrl-C): the task runs on.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The call is interrupted once it has said which task it runs (its
	// {"type":"task"} line): before that, it has no task to name.
	told := &watchedWriter{want: `"type":"task"`, seen: make(chan struct{})}
	go func() {
		var stdout bytes.Buffer
		err := run(ctx, []string{"call", "--server", s.base, "ts", "work"}, &stdout, told)
		done <- result{stdout: stdout.String(), stderr: told.String(), err: err, code: exitCode(err)}
	}()
	waitTaskServer(t, ts, "the second task", func() bool { return len(ts.Tasks()) == 2 })
	second := "ts:" + ts.Tasks()[1]
	c, err := client.New(client.AgentURL(s.base, "agentmcp", "default"), nil)
	if err != nil {
		t.Fatal(err)
	}
	waitTaskServer(t, ts, "the second task stored", func() bool {
		_, err := c.Task(context.Background(), second)
		return err == nil
	})
	select {
	case <-told.seen:
	case r = <-done:
		t.Fatalf("the second call ended before it named its task: code %d, stderr %q", r.code, r.stderr)
	}
	cancel()
	r = <-done
	if r.code != exitInterrupted || !strings.Contains(r.stderr, "task "+second+" runs on: agentmcp tasks "+second) {
		t.Errorf("interrupted call: code %d, stderr %q", r.code, r.stderr)
	}
	if got := ts.Cancelled(); len(got) != 0 {
		t.Fatalf("the interrupted call cancelled %v", got)
	}

	// The list, one task, cancel.
	r = runCmd(t, "tasks", "--server", s.base)
	r.mustSucceed(t)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "ID ") ||
		!strings.HasPrefix(lines[1], second+" ") || !strings.Contains(lines[1], "working") ||
		!strings.HasPrefix(lines[2], id+" ") || !strings.Contains(lines[2], "completed") {
		t.Errorf("tasks:\n%s", r.stdout)
	}
	r = runCmd(t, "tasks", "--server", s.base, id)
	r.mustSucceed(t)
	if !strings.Contains(r.stdout, "status:   completed") || !strings.Contains(r.stdout, "research done") {
		t.Errorf("tasks %s:\n%s", id, r.stdout)
	}
	r = runCmd(t, "tasks", "--server", s.base, "--json", id)
	r.mustSucceed(t)
	var got api.Task
	decode(t, r.stdout, &got)
	if got.ID != id || !got.Done || !strings.Contains(string(got.Result), "research done") {
		t.Errorf("tasks --json %s: %+v", id, got)
	}
	r = runCmd(t, "tasks", "--server", s.base, "cancel", second)
	r.mustSucceed(t)
	if got := ts.Cancelled(); !slices.Equal(got, []string{strings.TrimPrefix(second, "ts:")}) {
		t.Fatalf("cancelled on the server: %v", got)
	}
	waitTaskServer(t, ts, "the cancel stored", func() bool {
		got, err := c.Task(context.Background(), second)
		return err == nil && got.Done && got.Status == api.TaskCancelled
	})

	for _, bad := range [][]string{{"no-colon"}, {"cancel"}, {"a:b", "c:d"}} {
		r = runCmd(t, append([]string{"tasks", "--server", s.base}, bad...)...)
		if r.code != exitUsage {
			t.Errorf("tasks %v: code %d, stderr %q", bad, r.code, r.stderr)
		}
	}
	r = runCmd(t, "tasks", "--server", s.base, "ts:nope")
	if line := r.errorLine(t, exitFailure); !strings.Contains(line, `has no task "ts:nope"`) {
		t.Errorf("unknown task: %s", line)
	}
}

// TestTaskSurvivesKill: serve, a process, runs a task on an HTTP server
// (a call whose time ran out: 202) and is killed with SIGKILL. serve
// started again on the same SQLite file lists the task, polls it again,
// and its result, once the server has it, reaches GET .../tasks/{id}.
func TestTaskSurvivesKill(t *testing.T) {
	t.Setenv("AGENTMCP_SECRET_KEY", "")
	t.Setenv(envToken, "")
	t.Setenv(envServer, "")
	bin := buildBinary(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "agentmcp.db")
	ts := mcptest.NewTaskServer(false)
	hs := mcptest.ServeHandler(t, ts)

	first, base := startServeProcess(t, bin, "--db", db)
	runCmd(t, "add", "--server", base, "--id", "ts", "ts", hs.URL).mustSucceed(t)

	c, err := client.New(client.AgentURL(base, "agentmcp", "default"), nil)
	if err != nil {
		t.Fatal(err)
	}
	body := `{"name":"work","arguments":{"q":"durable"},"timeoutMs":200}`
	res, err := http.Post(c.URL()+"/servers/ts/tools/call", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var task api.Task
	err = json.NewDecoder(res.Body).Decode(&task)
	res.Body.Close()
	if res.StatusCode != http.StatusAccepted || err != nil || task.ID == "" {
		t.Fatalf("call: %d %+v %v", res.StatusCode, task, err)
	}
	waitTaskServer(t, ts, "a poll", func() bool { return slices.Contains(ts.Methods(), "tasks/get") })

	if err := first.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	first.Wait()
	polled := len(ts.Methods())

	s := startServe(t, "--db", db)
	c2, err := client.New(client.AgentURL(s.base, "agentmcp", "default"), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	list, _, err := c2.Tasks(ctx) // wakes the agent, which resumes polling
	if err != nil || len(list) != 1 || list[0].ID != task.ID || list[0].Done || list[0].Tool != "work" {
		t.Fatalf("tasks after the restart: %+v, %v", list, err)
	}
	waitTaskServer(t, ts, "a poll after the restart", func() bool {
		return slices.Contains(ts.Methods()[polled:], "tasks/get")
	})
	ts.Finish(task.TaskID, "survived")
	var got api.Task
	waitTaskServer(t, ts, "the result stored", func() bool {
		got, err = c2.Task(ctx, task.ID)
		return err == nil && got.Done
	})
	if got.Status != api.TaskCompleted || !strings.Contains(string(got.Result), "survived") {
		t.Fatalf("task after the restart: %+v", got)
	}
	if r := runCmd(t, "tasks", "--server", s.base, task.ID); r.err != nil || !strings.Contains(r.stdout, "survived") {
		t.Errorf("agentmcp tasks %s: %v\n%s", task.ID, r.err, r.stdout)
	}
}

// TestTasksDB: agentmcp tasks --db lists a stopped serve's tasks from its
// database, and reading them changes nothing: a task that was running is
// still running, for the next serve to resume (a command that opens the
// agent dormant, such as ls --db, stored it failed: "not connected").
func TestTasksDB(t *testing.T) {
	t.Setenv("AGENTMCP_SECRET_KEY", "")
	t.Setenv(envToken, "")
	t.Setenv(envServer, "")
	ts := mcptest.NewTaskServer(false)
	hs := mcptest.ServeHandler(t, ts)
	db := filepath.Join(t.TempDir(), "agentmcp.db")
	s := startServe(t, "--db", db)
	runCmd(t, "add", "--server", s.base, "--id", "ts", "ts", hs.URL).mustSucceed(t)
	c, err := client.New(client.AgentURL(s.base, "agentmcp", "default"), nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.Post(c.URL()+"/servers/ts/tools/call", "application/json", strings.NewReader(`{"name":"work","timeoutMs":100}`))
	if err != nil {
		t.Fatal(err)
	}
	var task api.Task
	err = json.NewDecoder(res.Body).Decode(&task)
	res.Body.Close()
	if res.StatusCode != http.StatusAccepted || err != nil {
		t.Fatalf("call: %d %v", res.StatusCode, err)
	}
	if r := s.stop(); r.err != nil {
		t.Fatalf("serve: %v %s", r.err, r.stderr)
	}
	polls := len(ts.Methods())
	// ls --db opens the agent as tasks --db does: neither touches tasks.
	runCmd(t, "ls", "--db", db).mustSucceed(t)

	r := runCmd(t, "tasks", "--db", db)
	r.mustSucceed(t)
	if !strings.Contains(r.stdout, task.ID+" ") || !strings.Contains(r.stdout, "working") {
		t.Errorf("tasks --db:\n%s", r.stdout)
	}
	r = runCmd(t, "tasks", "--db", db, "--json", task.ID)
	r.mustSucceed(t)
	var got api.Task
	decode(t, r.stdout, &got)
	if got.ID != task.ID || got.Done || got.Status != api.TaskWorking {
		t.Errorf("tasks --db %s: %+v", task.ID, got)
	}
	// Read again, after the commands ended: still running, not polled.
	r = runCmd(t, "tasks", "--db", db, "--json", task.ID)
	decode(t, r.stdout, &got)
	if got.Done || got.Status != api.TaskWorking {
		t.Errorf("after tasks --db: %+v", got)
	}
	if m := ts.Methods()[polls:]; len(m) != 0 {
		t.Errorf("tasks --db sent %v to the server", m)
	}
	if r := runCmd(t, "tasks", "--db", db, "cancel", task.ID); r.code != exitUsage {
		t.Errorf("tasks --db cancel: code %d, stderr %q", r.code, r.stderr)
	}
}

// watchedWriter keeps what is written to it and closes seen once it holds
// want; it is safe for concurrent use.
type watchedWriter struct {
	want string
	seen chan struct{}

	mu   sync.Mutex
	buf  bytes.Buffer
	once sync.Once
}

func (w *watchedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return n, err
}

func (w *watchedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}
