package mcpclient_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/mcpclient/input"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// taskEras are the two eras of tasks, served by mcptest.TaskServer.
var taskEras = []struct {
	name     string
	modern   bool
	protocol string
}{
	{"2025-11-25", false, "2025-11-25"},
	{"2026-07-28", true, "2026-07-28"},
}

// newTaskManager returns a Manager that polls tasks quickly, with the
// TaskServer ts registered and ready as "ts".
func newTaskManager(t *testing.T, srv *mcptest.HTTPServer) *mcpclient.Manager {
	t.Helper()
	m := newManager(t, &mcpclient.Options{Tasks: mcpclient.TaskOptions{MinPollInterval: 5 * time.Millisecond}})
	m.ConfigureElicitationHandlers(&input.ElicitationHandlers{
		Form: func(_ context.Context, req *input.ElicitationRequest, _ string) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
	})
	connectReady(t, m, "ts", mcpclient.ServerOptions{URL: srv.URL})
	return m
}

// waitServer waits until cond holds on the TaskServer.
func waitServer(t *testing.T, ts *mcptest.TaskServer, cond func() bool) {
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
			t.Fatalf("timed out; methods %v, tasks %v", ts.Methods(), ts.Tasks())
		}
	}
}

// TestTaskLifecycle runs a task in each era against a Go server: a plain
// CallTool creates it, polls it (its status message comes as progress),
// and returns its result once the server finishes it.
func TestTaskLifecycle(t *testing.T) {
	for _, era := range taskEras {
		t.Run(era.name, func(t *testing.T) {
			t.Parallel()
			ts := mcptest.NewTaskServer(era.modern)
			m := newTaskManager(t, mcptest.ServeHandler(t, ts))
			if info, _ := m.Server("ts"); info.ProtocolVersion != era.protocol {
				t.Fatalf("protocol %q, want %q", info.ProtocolVersion, era.protocol)
			}
			ctx := testCtx(t)

			var (
				mu       sync.Mutex
				messages []string
			)
			type outcome struct {
				res *mcp.CallToolResult
				err error
			}
			done := make(chan outcome, 1)
			go func() {
				res, err := m.CallTool(ctx, "ts", "work", nil, &mcpclient.CallOptions{
					Progress: func(p *mcp.ProgressNotificationParams) {
						mu.Lock()
						messages = append(messages, p.Message)
						mu.Unlock()
					},
				})
				done <- outcome{res, err}
			}()
			waitServer(t, ts, func() bool { return len(ts.Tasks()) == 1 })
			id := ts.Tasks()[0]
			ts.SetStatus(id, "halfway")
			waitServer(t, ts, func() bool {
				mu.Lock()
				defer mu.Unlock()
				return slices.Contains(messages, "halfway")
			})
			ts.Finish(id, "done")
			out := <-done
			if out.err != nil || textOf(t, out.res) != "done" {
				t.Fatalf("CallTool = %+v, %v", out.res, out.err)
			}
			methods := ts.Methods()
			if !slices.Contains(methods, "tasks/get") {
				t.Errorf("no tasks/get in %v", methods)
			}
			if want := !era.modern; slices.Contains(methods, "tasks/result") != want {
				t.Errorf("tasks/result sent = %v, want %v: %v", !want, want, methods)
			}

			// A tool without tasks is called plainly (2025-11-25), or the
			// server answers at once (2026-07-28).
			res, err := m.CallTool(ctx, "ts", "plain", nil, nil)
			if err != nil || textOf(t, res) != "plain result" {
				t.Fatalf("plain: %+v, %v", res, err)
			}
		})
	}
}

// TestTaskCancel cancels a task's call: tasks/cancel reaches the server.
func TestTaskCancel(t *testing.T) {
	for _, era := range taskEras {
		t.Run(era.name, func(t *testing.T) {
			t.Parallel()
			ts := mcptest.NewTaskServer(era.modern)
			m := newTaskManager(t, mcptest.ServeHandler(t, ts))
			ctx, cancel := context.WithCancel(testCtx(t))
			done := make(chan error, 1)
			go func() {
				_, err := m.CallTool(ctx, "ts", "work", nil, nil)
				done <- err
			}()
			// Once the client polls, it knows the task.
			waitServer(t, ts, func() bool { return slices.Contains(ts.Methods(), "tasks/get") })
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Fatalf("CallTool = %v, want context.Canceled", err)
			}
			waitServer(t, ts, func() bool { return len(ts.Cancelled()) == 1 })
			if got, want := ts.Cancelled(), ts.Tasks(); !slices.Equal(got, want) {
				t.Errorf("cancelled %v, want %v", got, want)
			}

			// CancelTask cancels by handle.
			h, _, err := m.StartTask(testCtx(t), "ts", "work", nil, nil)
			if err != nil || h == nil {
				t.Fatalf("StartTask = %+v, %v", h, err)
			}
			if err := m.CancelTask(testCtx(t), h); err != nil {
				t.Fatal(err)
			}
			if got := ts.Cancelled(); len(got) != 2 || got[1] != h.TaskID {
				t.Errorf("cancelled %v, want %s last", got, h.TaskID)
			}
			_, err = m.WaitTask(testCtx(t), h, nil)
			if !errors.Is(err, mcpclient.ErrTaskCancelled) {
				t.Errorf("WaitTask of a cancelled task = %v", err)
			}
		})
	}
}

// TestTaskInput answers a 2026-07-28 task's request for input through the
// elicitation handler, with tasks/update.
func TestTaskInput(t *testing.T) {
	ts := mcptest.NewTaskServer(true)
	m := newTaskManager(t, mcptest.ServeHandler(t, ts))
	res, err := m.CallTool(testCtx(t), "ts", "ask", nil, nil)
	if err != nil || textOf(t, res) != "hello Ada" {
		t.Fatalf("CallTool = %+v, %v", res, err)
	}
	if methods := ts.Methods(); !slices.Contains(methods, "tasks/update") {
		t.Errorf("no tasks/update in %v", methods)
	}
}

// TestTaskExpired: a task the server forgot (its TTL ended) fails the
// wait with ErrTaskExpired.
func TestTaskExpired(t *testing.T) {
	for _, era := range taskEras {
		t.Run(era.name, func(t *testing.T) {
			t.Parallel()
			ts := mcptest.NewTaskServer(era.modern)
			m := newTaskManager(t, mcptest.ServeHandler(t, ts))
			h, _, err := m.StartTask(testCtx(t), "ts", "work", nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if h.TTL != time.Minute {
				t.Errorf("TTL %v, want the server's 1m", h.TTL)
			}
			ts.Expire(h.TaskID)
			_, err = m.WaitTask(testCtx(t), h, nil)
			var te *mcpclient.TaskError
			if !errors.Is(err, mcpclient.ErrTaskExpired) || !errors.As(err, &te) || te.TaskID != h.TaskID {
				t.Fatalf("WaitTask = %v, want ErrTaskExpired", err)
			}
		})
	}
}

// TestTaskResumeByHandle starts a task with one Manager and gets its
// result with another, from the handle alone: what a restarted process
// does.
func TestTaskResumeByHandle(t *testing.T) {
	for _, era := range taskEras {
		t.Run(era.name, func(t *testing.T) {
			t.Parallel()
			ts := mcptest.NewTaskServer(era.modern)
			srv := mcptest.ServeHandler(t, ts)
			first := newTaskManager(t, srv)
			var started *mcpclient.TaskHandle
			h, _, err := first.StartTask(testCtx(t), "ts", "work", map[string]any{"n": 1},
				&mcpclient.CallOptions{TaskStarted: func(h *mcpclient.TaskHandle) { started = h }})
			if err != nil || started != h {
				t.Fatalf("StartTask = %+v, %v (started %+v)", h, err, started)
			}
			if err := first.Close(testCtx(t)); err != nil {
				t.Fatal(err)
			}

			second := newTaskManager(t, srv)
			task, err := second.GetTask(testCtx(t), h)
			if err != nil || task.Status != mcpclient.TaskWorking {
				t.Fatalf("GetTask = %+v, %v", task, err)
			}
			ts.Finish(h.TaskID, "finished later")
			res, err := second.WaitTask(testCtx(t), h, nil)
			if err != nil || textOf(t, res) != "finished later" {
				t.Fatalf("WaitTask = %+v, %v", res, err)
			}
		})
	}
}

// count returns how many times method was received.
func count(methods []string, method string) int {
	n := 0
	for _, m := range methods {
		if m == method {
			n++
		}
	}
	return n
}

// TestTaskListen: a 2026-07-28 wait also listens for its task's
// notifications (subscriptions/listen, filter taskIds): each change the
// server pushes (notifications/tasks) is polled at once, though the next
// poll is ten minutes away, and the listen ends with the wait.
func TestTaskListen(t *testing.T) {
	ts := mcptest.NewTaskServer(true)
	srv := mcptest.ServeHandler(t, ts)
	m := newManager(t, &mcpclient.Options{Tasks: mcpclient.TaskOptions{MinPollInterval: 10 * time.Minute, MaxPollInterval: 10 * time.Minute}})
	connectReady(t, m, "ts", mcpclient.ServerOptions{URL: srv.URL})
	ctx := testCtx(t)

	messages := make(chan string, 10)
	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := m.CallTool(ctx, "ts", "work", nil, &mcpclient.CallOptions{
			Progress: func(p *mcp.ProgressNotificationParams) { messages <- p.Message },
		})
		done <- outcome{res, err}
	}()
	waitServer(t, ts, func() bool { return ts.Listening() == 1 && count(ts.Methods(), "tasks/get") == 1 })
	id := ts.Tasks()[0]

	ts.SetStatus(id, "halfway")
	select {
	case msg := <-messages:
		if msg != "halfway" {
			t.Errorf("status message %q", msg)
		}
	case <-ctx.Done():
		t.Fatalf("the status change was not polled; methods %v", ts.Methods())
	}
	ts.Finish(id, "finished")
	var o outcome
	select {
	case o = <-done:
	case <-ctx.Done():
		t.Fatalf("the end was not polled; methods %v", ts.Methods())
	}
	if o.err != nil || textOf(t, o.res) != "finished" {
		t.Fatalf("CallTool = %+v, %v", o.res, o.err)
	}
	// The first poll, then one per notification (two when the first poll
	// read the status the first notification announced).
	if n := count(ts.Methods(), "tasks/get"); n < 2 || n > 3 {
		t.Errorf("%d polls, want 2 or 3: %v", n, ts.Methods())
	}
	waitServer(t, ts, func() bool { return ts.Listening() == 0 })
}

// skewClock is real time, moved forward by skew.
type skewClock struct{ skew atomic.Int64 }

func (c *skewClock) Now() time.Time                         { return time.Now().Add(time.Duration(c.skew.Load())) }
func (c *skewClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// TestTaskTTL: a task still working on its server once its ttl passed (by
// the client's clock) ends the wait with ErrTaskExpired: the client does
// not poll a task past the retention it was given.
func TestTaskTTL(t *testing.T) {
	for _, era := range taskEras {
		t.Run(era.name, func(t *testing.T) {
			t.Parallel()
			ts := mcptest.NewTaskServer(era.modern)
			srv := mcptest.ServeHandler(t, ts)
			clock := &skewClock{}
			m := newManager(t, &mcpclient.Options{Clock: clock, Tasks: mcpclient.TaskOptions{MinPollInterval: 5 * time.Millisecond}})
			connectReady(t, m, "ts", mcpclient.ServerOptions{URL: srv.URL})
			h, _, err := m.StartTask(testCtx(t), "ts", "work", nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if h.TTL != time.Minute {
				t.Fatalf("TTL %v, want the server's 1m", h.TTL)
			}
			clock.skew.Store(int64(2 * time.Minute))
			_, err = m.WaitTask(testCtx(t), h, nil)
			var te *mcpclient.TaskError
			if !errors.Is(err, mcpclient.ErrTaskExpired) || !errors.As(err, &te) || te.Status != mcpclient.TaskWorking {
				t.Fatalf("WaitTask = %v, want ErrTaskExpired while working", err)
			}
			if got := ts.Tasks(); len(got) != 1 {
				t.Errorf("server tasks %v", got)
			}
		})
	}
}

// TestTaskOutputSchema: a task's result is validated against its tool's
// outputSchema as a plain call's is, in each era: one whose
// structuredContent breaks it fails CallTool and WaitTask with an
// *OutputSchemaError carrying the result, a conforming one passes, a
// result the server gives at once instead of a task is checked too, and
// in warn mode the result comes back with a warning logged.
func TestTaskOutputSchema(t *testing.T) {
	for _, era := range taskEras {
		t.Run(era.name, func(t *testing.T) {
			t.Parallel()
			ts := mcptest.NewTaskServer(era.modern)
			srv := mcptest.ServeHandler(t, ts)
			m := newTaskManager(t, srv)
			ctx := testCtx(t)
			wantInvalid := func(what string, res *mcp.CallToolResult, err error, tool string) {
				t.Helper()
				var oerr *mcpclient.OutputSchemaError
				if !errors.As(err, &oerr) || !errors.Is(err, mcpclient.ErrInvalidResult) || res != nil {
					t.Fatalf("%s: %+v, %v; want an *OutputSchemaError", what, res, err)
				}
				if oerr.ServerID != "ts" || oerr.Tool != tool || oerr.Result == nil || oerr.Result.StructuredContent == nil ||
					!strings.Contains(err.Error(), `"n": got string, want integer`) {
					t.Errorf("%s: %+v (%v); want it to name the server and the tool, carry the result and say where", what, oerr, err)
				}
			}
			// finish finishes the next task the server creates.
			seen := 0
			finish := func(structured any) {
				waitServer(t, ts, func() bool { return len(ts.Tasks()) > seen })
				seen++
				ts.FinishWith(ts.Tasks()[seen-1], "counted", structured)
			}

			// CallTool, through the task.
			done := make(chan error, 1)
			var res *mcp.CallToolResult
			go func() {
				var err error
				res, err = m.CallTool(ctx, "ts", "count", nil, nil)
				done <- err
			}()
			finish(map[string]any{"n": "three"})
			wantInvalid("CallTool of a task", res, <-done, "count")
			go func() {
				var err error
				res, err = m.CallTool(ctx, "ts", "count", nil, nil)
				done <- err
			}()
			finish(map[string]any{"n": 3})
			if err := <-done; err != nil || textOf(t, res) != "counted" {
				t.Fatalf("conforming result of a task: %+v, %v", res, err)
			}

			// StartTask and WaitTask.
			h, _, err := m.StartTask(ctx, "ts", "count", nil, nil)
			if err != nil || h == nil {
				t.Fatalf("StartTask: %v, %v", h, err)
			}
			finish(map[string]any{"n": "three"})
			res, err = m.WaitTask(ctx, h, nil)
			wantInvalid("WaitTask", res, err, "count")

			// A result given at once (2026-07-28: instead of a task).
			res, err = m.CallTool(ctx, "ts", "count-now", nil, nil)
			wantInvalid("a result at once", res, err, "count-now")
			if era.modern {
				h, res, err := m.StartTask(ctx, "ts", "count-now", nil, nil)
				if h != nil {
					t.Fatalf("StartTask of count-now made a task")
				}
				wantInvalid("StartTask's result at once", res, err, "count-now")
			}

			// Warn: the result, and a warning.
			var logs syncBuffer
			wm := newManager(t, &mcpclient.Options{OutputValidation: mcpclient.OutputValidationWarn,
				Tasks: mcpclient.TaskOptions{MinPollInterval: 5 * time.Millisecond}, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			connectReady(t, wm, "ts", mcpclient.ServerOptions{URL: srv.URL})
			go func() {
				var err error
				res, err = wm.CallTool(ctx, "ts", "count", nil, nil)
				done <- err
			}()
			finish(map[string]any{"n": "three"})
			if err := <-done; err != nil || res == nil || res.StructuredContent == nil {
				t.Fatalf("warn mode: %+v, %v; want the result", res, err)
			}
			if !strings.Contains(logs.String(), "does not match its output schema") || !strings.Contains(logs.String(), "tool=count") {
				t.Errorf("warn mode logged %q", logs.String())
			}
		})
	}
}
