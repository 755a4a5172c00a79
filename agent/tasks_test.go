package agent_test

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/store"
	"github.com/agentmcp/agentmcp/store/postgres"
)

// waitTaskServer waits until cond holds on the TaskServer.
func waitTaskServer(t *testing.T, ts *mcptest.TaskServer, cond func() bool) {
	t.Helper()
	ctx := testCtx(t)
	for {
		ch := ts.Changed()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("timed out; methods %v", ts.Methods())
		}
	}
}

// TestDurableTask runs a tool call as a task on an HTTP server, closes the
// agent while the task runs, and opens it again on the same store: the
// task, stored before its first poll with the caller's correlation, is
// polled again and its result stored and delivered. Then a task is
// cancelled through the agent: tasks/cancel reaches the server, and the
// task is stored cancelled.
func TestDurableTask(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		for _, modern := range []bool{false, true} {
			name := backend + "/2025-11-25"
			if modern {
				name = backend + "/2026-07-28"
			}
			t.Run(name, func(t *testing.T) {
				open := reopener(t, backend)
				ts := mcptest.NewTaskServer(modern)
				srv := mcptest.ServeHandler(t, ts)
				opts := &agent.Options{Manager: &mcpclient.Options{Tasks: mcpclient.TaskOptions{MinPollInterval: 5 * time.Millisecond}}}
				ctx := testCtx(t)
				st := open()
				a := openAgent(t, st, "durable", opts)
				if _, err := a.AddMCPServer(ctx, "Tasks", srv.URL, &agent.AddOptions{ID: "ts"}); err != nil {
					t.Fatal(err)
				}

				done := make(chan error, 1)
				go func() {
					_, err := a.CallTool(agent.WithTaskCorrelation(ctx, "request-1"), "ts", "work", map[string]any{"n": 1}, nil)
					done <- err
				}()
				waitTaskServer(t, ts, func() bool { return slices.Contains(ts.Methods(), "tasks/get") })
				tasks, err := a.Tasks(ctx)
				if err != nil || len(tasks) != 1 {
					t.Fatalf("Tasks = %+v, %v", tasks, err)
				}
				task := tasks[0]
				if task.Done || task.ServerID != "ts" || task.Tool != "work" || task.Correlation != "request-1" ||
					task.ArgumentsHash == "" || task.Status != "working" || task.TaskID != ts.Tasks()[0] {
					t.Fatalf("stored task %+v", task)
				}
				if err := a.Close(ctx); err != nil {
					t.Fatal(err)
				}
				if err := <-done; err == nil {
					t.Fatal("the call returned no error when the agent closed under it")
				}
				if tasks, _ := st.(store.TaskStore).ListTasks(ctx, a.Namespace()); len(tasks) != 1 || tasks[0].Done {
					t.Fatalf("after Close: %+v", tasks)
				}

				// A new process: the store, the agent, the task resumed.
				st2 := open()
				b := openAgent(t, st2, "durable", opts)
				polls := len(ts.Methods())
				waitTaskServer(t, ts, func() bool { return slices.Contains(ts.Methods()[polls:], "tasks/get") })
				ts.Finish(task.TaskID, "finished after the restart")
				res, err := b.TaskResult(ctx, "ts", task.TaskID)
				if err != nil || len(res.Content) != 1 {
					t.Fatalf("TaskResult = %+v, %v", res, err)
				}
				stored, err := b.Task(ctx, "ts", task.TaskID)
				if err != nil || !stored.Done || stored.Status != "completed" || stored.Result == nil {
					t.Fatalf("stored after the result: %+v, %v", stored, err)
				}

				// Cancel through the agent.
				go func() {
					_, err := b.CallTool(ctx, "ts", "work", nil, nil)
					done <- err
				}()
				waitTaskServer(t, ts, func() bool { return len(ts.Tasks()) == 2 })
				var second store.Task
				waitTaskServer(t, ts, func() bool {
					tasks, _ := b.Tasks(ctx)
					if len(tasks) == 2 {
						second = tasks[1]
					}
					return len(tasks) == 2
				})
				if err := b.CancelTask(ctx, "ts", second.TaskID); err != nil {
					t.Fatal(err)
				}
				if got := ts.Cancelled(); !slices.Equal(got, []string{second.TaskID}) {
					t.Errorf("cancelled on the server: %v, want %s", got, second.TaskID)
				}
				if err := <-done; !errors.Is(err, mcpclient.ErrTaskCancelled) {
					t.Errorf("the cancelled call returned %v", err)
				}
				if stored, err := b.Task(ctx, "ts", second.TaskID); err != nil || !stored.Done || stored.Status != "cancelled" {
					t.Errorf("stored after the cancel: %+v, %v", stored, err)
				}
			})
		}
	}
}

// waitFor polls cond until it holds, within the test's timeout: for what
// no channel announces (a store write after a server's answer).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	ctx := testCtx(t)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestHibernatedTask: an agent hibernated while a task it polls still
// runs on its server is woken to poll it (HostOptions.TaskWake) and goes
// back to sleep; once the server finished the task, a wake stores its
// result, TaskResult delivers it, and no further wake is scheduled.
func TestHibernatedTask(t *testing.T) {
	for _, modern := range []bool{false, true} {
		name := "2025-11-25"
		if modern {
			name = "2026-07-28"
		}
		t.Run(name, func(t *testing.T) {
			ctx := testCtx(t)
			ts := mcptest.NewTaskServer(modern)
			srv := mcptest.ServeHandler(t, ts)
			st := openSQLite(t, "")
			hopts := func() *agent.HostOptions {
				return &agent.HostOptions{
					TaskWake: 20 * time.Millisecond,
					Agent:    &agent.Options{Manager: &mcpclient.Options{Tasks: mcpclient.TaskOptions{MinPollInterval: 5 * time.Millisecond}}},
				}
			}

			// A first process starts the task and ends while it runs.
			h1 := agent.NewHost(st, hopts())
			a, release, err := h1.Use(ctx, "test-agent", "sleeper")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.AddMCPServer(ctx, "Tasks", srv.URL, &agent.AddOptions{ID: "ts"}); err != nil {
				t.Fatal(err)
			}
			go a.CallTool(ctx, "ts", "work", nil, nil) //nolint:errcheck // cut short by Close
			waitTaskServer(t, ts, func() bool { return slices.Contains(ts.Methods(), "tasks/get") })
			release()
			if err := h1.Close(ctx); err != nil {
				t.Fatal(err)
			}
			taskID := ts.Tasks()[0]

			// The next one resumes polling it, then hibernates the agent.
			h, _ := newHost(t, st, hopts())
			_, release = use(t, h, "sleeper")
			polls := len(ts.Methods())
			waitTaskServer(t, ts, func() bool { return slices.Contains(ts.Methods()[polls:], "tasks/get") })
			release()
			if !h.Hibernate(ctx, "test-agent", "sleeper") {
				t.Fatal("not hibernated")
			}
			wakes := h.Stats().Wakes

			// Asleep, it is woken to poll.
			polls = len(ts.Methods())
			waitTaskServer(t, ts, func() bool { return slices.Contains(ts.Methods()[polls:], "tasks/get") })
			if h.Stats().Wakes == wakes {
				t.Errorf("polled without a wake: %d wakes", wakes)
			}

			ts.Finish(taskID, "finished while the agent slept")
			waitFor(t, "the result stored", func() bool {
				tasks, err := st.(store.TaskStore).ListTasks(ctx, "test-agent/sleeper")
				return err == nil && len(tasks) == 1 && tasks[0].Done
			})
			waitFor(t, "the agent asleep with no wake scheduled", func() bool {
				agent.WaitAsleep(h)
				return len(h.Awake()) == 0 && agent.TaskWakesPending(h) == 0
			})
			stored, err := st.(store.TaskStore).ListTasks(ctx, "test-agent/sleeper")
			if err != nil || stored[0].Status != "completed" || stored[0].Result == nil {
				t.Fatalf("stored %+v, %v", stored, err)
			}

			// Whoever asks next gets the result.
			a, release = use(t, h, "sleeper")
			defer release()
			res, err := a.TaskResult(ctx, "ts", taskID)
			if err != nil || allText(res) != "finished while the agent slept" {
				t.Fatalf("TaskResult = %+v, %v", res, err)
			}
		})
	}
}

// TestDirectoryTask: an agent opened under a Directory (a replica of a
// cluster) stores its tasks too, their writes carrying its fence.
func TestDirectoryTask(t *testing.T) {
	ctx := testCtx(t)
	ts := mcptest.NewTaskServer(true)
	srv := mcptest.ServeHandler(t, ts)
	dir := &directory{t: t}
	h, _ := newHost(t, openSQLite(t, ""), &agent.HostOptions{
		Directory: dir,
		Agent:     &agent.Options{Manager: &mcpclient.Options{Tasks: mcpclient.TaskOptions{MinPollInterval: 5 * time.Millisecond}}},
	})
	a, release := use(t, h, "replica")
	defer release()
	if _, err := a.AddMCPServer(ctx, "Tasks", srv.URL, &agent.AddOptions{ID: "ts"}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := a.CallTool(ctx, "ts", "work", nil, nil)
		done <- err
	}()
	waitTaskServer(t, ts, func() bool { return slices.Contains(ts.Methods(), "tasks/get") })
	tasks, err := a.Tasks(ctx)
	if err != nil || len(tasks) != 1 || tasks[0].Done {
		t.Fatalf("Tasks = %+v, %v", tasks, err)
	}
	ts.Finish(tasks[0].TaskID, "done")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got, err := a.Task(ctx, "ts", tasks[0].TaskID); err != nil || !got.Done || got.Status != "completed" {
		t.Fatalf("Task = %+v, %v", got, err)
	}
}

// allText joins the text items of a result.
func allText(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// errStoreFault is the write failure faultyTasks injects.
var errStoreFault = errors.New("injected store fault")

// faultyTasks is a store whose writes of tasks' outcomes fail while fail
// is set: the store fault of a process that dies (or loses its database)
// between the server's answer and the write.
type faultyTasks struct {
	store.Store
	fail    atomic.Bool
	refused atomic.Int32 // outcomes refused
}

func (f *faultyTasks) PutTask(ctx context.Context, t store.Task) error {
	if t.Done && f.fail.Load() {
		f.refused.Add(1)
		return errStoreFault
	}
	return f.Store.(store.TaskStore).PutTask(ctx, t)
}

func (f *faultyTasks) ListTasks(ctx context.Context, ns string) ([]store.Task, error) {
	return f.Store.(store.TaskStore).ListTasks(ctx, ns)
}

func (f *faultyTasks) DeleteTask(ctx context.Context, ns, serverID, taskID string) error {
	return f.Store.(store.TaskStore).DeleteTask(ctx, ns, serverID, taskID)
}

// TestTaskOutcomeWriteFails: nothing is lost when the write of a task's
// outcome fails after the server answered. While the agent lives, the
// task stays running and is polled again (tasks/get is idempotent) until
// the outcome is stored; when the process dies with the write undone,
// the next one finds the task running, polls it again and stores it.
func TestTaskOutcomeWriteFails(t *testing.T) {
	for _, modern := range []bool{false, true} {
		name := "2025-11-25"
		if modern {
			name = "2026-07-28"
		}
		t.Run(name, func(t *testing.T) {
			ctx := testCtx(t)
			ts := mcptest.NewTaskServer(modern)
			srv := mcptest.ServeHandler(t, ts)
			path := filepath.Join(t.TempDir(), "agent.db")
			raw := openSQLite(t, path)
			st := &faultyTasks{Store: raw}
			opts := &agent.Options{Manager: &mcpclient.Options{Tasks: mcpclient.TaskOptions{MinPollInterval: 5 * time.Millisecond}}}
			a := openAgent(t, st, "faulty", opts)
			if _, err := a.AddMCPServer(ctx, "Tasks", srv.URL, &agent.AddOptions{ID: "ts"}); err != nil {
				t.Fatal(err)
			}
			stored := func(id string) store.Task {
				t.Helper()
				got, err := a.Task(ctx, "ts", id)
				if err != nil {
					t.Fatal(err)
				}
				return got
			}

			// The store fails once: the outcome is written on a later poll.
			st.fail.Store(true)
			done := make(chan error, 1)
			go func() {
				res, err := a.CallTool(ctx, "ts", "work", nil, nil)
				if err == nil && allText(res) != "first" {
					err = errors.New("result " + allText(res))
				}
				done <- err
			}()
			waitTaskServer(t, ts, func() bool { return len(ts.Tasks()) == 1 })
			first := ts.Tasks()[0]
			ts.Finish(first, "first")
			if err := <-done; err != nil {
				t.Fatalf("the call: %v", err) // the caller had its result all the same
			}
			if st.refused.Load() != 1 || stored(first).Done {
				t.Fatalf("after the fault: %d refused, stored %+v", st.refused.Load(), stored(first))
			}
			polls := len(ts.Methods())
			st.fail.Store(false)
			waitFor(t, "the outcome stored", func() bool { return stored(first).Done })
			if got := stored(first); got.Status != "completed" || !strings.Contains(string(got.Result), "first") {
				t.Errorf("stored %+v", got)
			}
			if !slices.Contains(ts.Methods()[polls:], "tasks/get") {
				t.Errorf("stored without polling again: %v", ts.Methods()[polls:])
			}
			if res, err := a.TaskResult(ctx, "ts", first); err != nil || allText(res) != "first" {
				t.Errorf("TaskResult = %+v, %v", res, err)
			}

			// The process dies with the write undone (the store fails
			// until the end): the next one polls again and stores it.
			st.fail.Store(true)
			go func() {
				_, err := a.CallTool(ctx, "ts", "work", nil, nil)
				done <- err
			}()
			waitTaskServer(t, ts, func() bool { return len(ts.Tasks()) == 2 })
			second := ts.Tasks()[1]
			refused := st.refused.Load()
			ts.Finish(second, "second")
			if err := <-done; err != nil {
				t.Fatalf("the second call: %v", err)
			}
			waitFor(t, "the outcome refused", func() bool { return st.refused.Load() > refused })
			if err := a.Close(ctx); err != nil {
				t.Fatal(err)
			}
			if tasks, err := raw.(store.TaskStore).ListTasks(ctx, a.Namespace()); err != nil || len(tasks) != 2 || tasks[1].Done {
				t.Fatalf("stored when the process died: %+v, %v", tasks, err)
			}
			polls = len(ts.Methods())
			b := openAgent(t, openSQLite(t, path), "faulty", opts)
			res, err := b.TaskResult(ctx, "ts", second)
			if err != nil || allText(res) != "second" {
				t.Fatalf("TaskResult after the restart = %+v, %v", res, err)
			}
			if !slices.Contains(ts.Methods()[polls:], "tasks/get") {
				t.Errorf("no poll after the restart: %v", ts.Methods()[polls:])
			}
		})
	}
}

// TestHostStartTasks: a process that ended while a task ran (its agent
// asleep since) leaves the task running in the store; the next host's
// Start wakes that agent, with no request for it, to poll the task,
// stores the result the server has by then, and lets the agent sleep.
func TestHostStartTasks(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			ctx := testCtx(t)
			var st store.Store
			switch backend {
			case "sqlite":
				st = openSQLite(t, "")
			case "postgres":
				pst, err := postgres.Open(ctx, pg.Database(t), nil)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { pst.Close() })
				st = pst
			}
			ts := mcptest.NewTaskServer(true)
			srv := mcptest.ServeHandler(t, ts)
			opts := &agent.HostOptions{Agent: &agent.Options{Manager: &mcpclient.Options{Tasks: mcpclient.TaskOptions{MinPollInterval: 5 * time.Millisecond}}}}

			h1 := agent.NewHost(st, opts)
			a, release, err := h1.Use(ctx, "test-agent", "restarted")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.AddMCPServer(ctx, "Tasks", srv.URL, &agent.AddOptions{ID: "ts"}); err != nil {
				t.Fatal(err)
			}
			if _, _, err := h1.Use(ctx, "test-agent", "idle"); err != nil { // an agent without tasks
				t.Fatal(err)
			}
			go a.CallTool(ctx, "ts", "work", nil, nil) //nolint:errcheck // cut short by Close
			waitTaskServer(t, ts, func() bool { return slices.Contains(ts.Methods(), "tasks/get") })
			release()
			if err := h1.Close(ctx); err != nil {
				t.Fatal(err)
			}
			ts.Finish(ts.Tasks()[0], "finished while no process ran")

			h, _ := newHost(t, st, opts)
			if err := h.Start(ctx); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the result stored", func() bool {
				tasks, err := st.(store.TaskStore).ListTasks(ctx, "test-agent/restarted")
				return err == nil && len(tasks) == 1 && tasks[0].Done && tasks[0].Status == "completed"
			})
			waitFor(t, "the agent asleep again", func() bool {
				agent.WaitAsleep(h)
				return len(h.Awake()) == 0
			})
			if s := h.Stats(); s.Wakes != 1 {
				t.Errorf("%d wakes, want 1 (the agent with a task only)", s.Wakes)
			}
		})
	}
}

// TestTaskPollFails: a poll that fails (the server answers 503 for a
// while) is not the task's outcome: the call returns the error, but the
// task stays running in the store and is polled again until the server
// answers, and its result is then stored and delivered.
func TestTaskPollFails(t *testing.T) {
	ctx := testCtx(t)
	ts := mcptest.NewTaskServer(true)
	srv := mcptest.ServeHandler(t, ts)
	opts := &agent.Options{Manager: &mcpclient.Options{Tasks: mcpclient.TaskOptions{MinPollInterval: 5 * time.Millisecond}}}
	a := openAgent(t, openSQLite(t, ""), "outage", opts)
	if _, err := a.AddMCPServer(ctx, "Tasks", srv.URL, &agent.AddOptions{ID: "ts"}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := a.CallTool(ctx, "ts", "work", nil, nil)
		done <- err
	}()
	waitTaskServer(t, ts, func() bool { return slices.Contains(ts.Methods(), "tasks/get") })
	id := ts.Tasks()[0]
	srv.SetFault(http.StatusServiceUnavailable)
	if err := <-done; err == nil {
		t.Fatal("the call returned no error while its server failed")
	}
	if got, err := a.Task(ctx, "ts", id); err != nil || got.Done {
		t.Fatalf("stored after the failed poll: %+v, %v", got, err)
	}
	ts.Finish(id, "finished during the outage")
	srv.SetFault(0)
	res, err := a.TaskResult(ctx, "ts", id)
	if err != nil || allText(res) != "finished during the outage" {
		t.Fatalf("TaskResult = %+v, %v", res, err)
	}
	if got, err := a.Task(ctx, "ts", id); err != nil || !got.Done || got.Status != "completed" {
		t.Errorf("stored %+v, %v", got, err)
	}
}
