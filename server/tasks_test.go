package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/api/client"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/mcpclient"
)

// taskEnv is a server whose agent test/a has the TaskServer ts as its
// server "ts", polled every few milliseconds.
// callTimeout is the server's Options.CallTimeout (0 for the default).
func taskEnv(t *testing.T, modern bool, callTimeout time.Duration) (*env, *mcptest.TaskServer, *client.Client) {
	t.Helper()
	ts := mcptest.NewTaskServer(modern)
	hs := mcptest.ServeHandler(t, ts)
	e := newEnv(t, &Options{CallTimeout: callTimeout, Agent: &agent.Options{Manager: &mcpclient.Options{
		Tasks: mcpclient.TaskOptions{MinPollInterval: 5 * time.Millisecond, PollInterval: 5 * time.Millisecond},
	}}})
	c := e.client("test", "a")
	if _, err := c.AddMCPServer(testCtx(t), api.AddRequest{Name: "Tasks", URL: hs.URL, ID: "ts"}); err != nil {
		t.Fatal(err)
	}
	return e, ts, c
}

// waitTask polls cond, waking at each change of ts, until it holds.
func waitTask(t *testing.T, ts *mcptest.TaskServer, what string, cond func() bool) {
	t.Helper()
	ctx := testCtx(t)
	tick := time.NewTicker(10 * time.Millisecond) // the agent's writes are not ts's changes
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

// decodeTask decodes an api.Task body.
func decodeTask(t *testing.T, b []byte) api.Task {
	t.Helper()
	var task api.Task
	if err := json.Unmarshal(b, &task); err != nil {
		t.Fatalf("not a task: %s", b)
	}
	return task
}

// TestTaskRoutes: a tool call that the server runs as a task answers 202
// with the task (and its URL in Location) when the request's time runs
// out; the task is listed, its status message followed, and its result
// reaches GET .../tasks/{id} once the server finishes it. A call whose
// task ends in time answers with the result. POST .../cancel reaches the
// server (tasks/cancel), and the task is stored cancelled. In both eras.
func TestTaskRoutes(t *testing.T) {
	t.Parallel()
	for _, modern := range []bool{false, true} {
		name := "2025-11-25"
		if modern {
			name = "2026-07-28"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e, ts, c := taskEnv(t, modern, 0)
			ctx := testCtx(t)
			const calls = "/agents/test/a/servers/ts/tools/call"

			// The call's time runs out: 202 with the task.
			status, hdr, b := e.do("POST", calls, `{"name":"work","arguments":{"n":1},"timeoutMs":200}`)
			if status != http.StatusAccepted {
				t.Fatalf("call: %d %s", status, b)
			}
			task := decodeTask(t, b)
			first := ts.Tasks()[0]
			want := api.Task{ID: "ts:" + first, ServerID: "ts", TaskID: first, Tool: "work", Status: api.TaskWorking}
			if diff := cmp.Diff(want, task, cmpTask); diff != "" {
				t.Errorf("202 task (-want +got):\n%s", diff)
			}
			if got := hdr.Get("Location"); got != "/agents/test/a/tasks/ts:"+first {
				t.Errorf("Location: %q", got)
			}
			if slices.Contains(ts.Cancelled(), first) {
				t.Fatal("the task was cancelled when the request's time ran out")
			}
			// The task, the agent's now, does not keep it busy (it is
			// resumed from the store if the agent closes): once the
			// request is over, the agent is idle.
			waitTask(t, ts, "the request's end", func() bool {
				_, _, b := e.do("GET", "/agents/test/a/busy", "")
				var busy api.BusyState
				return json.Unmarshal(b, &busy) == nil && busy.InUse == 0
			})
			if _, _, b := e.do("GET", "/agents/test/a/busy", ""); !strings.Contains(string(b), `"reason":"idle"`) {
				t.Errorf("busy after the 202: %s", b)
			}

			// Listed, and followed.
			list, more, err := c.Tasks(ctx)
			if err != nil || more || len(list) != 1 || list[0].ID != task.ID || list[0].Done {
				t.Fatalf("Tasks = %+v, %v, %v", list, more, err)
			}
			ts.SetStatus(first, "halfway")
			waitTask(t, ts, "the status message", func() bool {
				got, err := c.Task(ctx, task.ID)
				return err == nil && got.StatusMessage == "halfway"
			})
			ts.Finish(first, "the answer")
			var done api.Task
			waitTask(t, ts, "the result", func() bool {
				done, err = c.Task(ctx, task.ID)
				return err == nil && done.Done
			})
			if done.Status != api.TaskCompleted || !strings.Contains(string(done.Result), "the answer") {
				t.Fatalf("ended task: %+v", done)
			}

			// A task that ends within the request's time: the result.
			answer := make(chan json.RawMessage, 1)
			go func() {
				res, err := c.CallTool(ctx, "ts", "work", nil)
				if err != nil {
					t.Error(err)
				}
				answer <- res
			}()
			waitTask(t, ts, "the second task", func() bool { return len(ts.Tasks()) == 2 })
			second := ts.Tasks()[1]
			waitTask(t, ts, "a poll of the second task", func() bool {
				got, err := c.Task(ctx, "ts:"+second)
				return err == nil && got.Status == api.TaskWorking
			})
			ts.Finish(second, "in time")
			if res := <-answer; !strings.Contains(string(res), "in time") {
				t.Fatalf("call answered %s", res)
			}

			// Cancel.
			status, _, b = e.do("POST", calls, `{"name":"work","timeoutMs":100}`)
			if status != http.StatusAccepted {
				t.Fatalf("call: %d %s", status, b)
			}
			third := decodeTask(t, b)
			status, _, b = e.do("POST", "/agents/test/a/tasks/"+third.ID+"/cancel", "")
			if status != http.StatusOK {
				t.Fatalf("cancel: %d %s", status, b)
			}
			if got := ts.Cancelled(); !slices.Equal(got, []string{third.TaskID}) {
				t.Fatalf("the server saw tasks/cancel of %v, want %s", got, third.TaskID)
			}
			waitTask(t, ts, "the cancelled task stored", func() bool {
				got, err := c.Task(ctx, third.ID)
				return err == nil && got.Done && got.Status == api.TaskCancelled
			})
			list, _, _ = c.Tasks(ctx)
			var ids []string
			for _, lt := range list {
				ids = append(ids, lt.ID)
			}
			if wantIDs := []string{third.ID, "ts:" + second, task.ID}; !slices.Equal(ids, wantIDs) {
				t.Errorf("listed %v, want %v (most recent first)", ids, wantIDs)
			}

			// Unknown ids.
			for _, id := range []string{"ts:nope", "nope:" + first, "no-colon"} {
				_, err := c.Task(ctx, id)
				var aerr *api.APIError
				if !errors.As(err, &aerr) || aerr.Code != api.CodeUnknownTask || aerr.Status != http.StatusNotFound {
					t.Errorf("Task(%q) = %v", id, err)
				}
			}
			if status, _, _ := e.do("DELETE", "/agents/test/a/tasks/"+task.ID, ""); status != http.StatusMethodNotAllowed {
				t.Errorf("DELETE a task: %d", status)
			}
		})
	}
}

// cmpTask compares tasks without their times.
var cmpTask = cmp.FilterPath(func(p cmp.Path) bool {
	switch p.Last().String() {
	case ".CreatedAt", ".UpdatedAt", ".ServerCreatedAt":
		return true
	}
	return false
}, cmp.Ignore())

// TestTaskCallStream: a streamed call that becomes a task says so (a task
// event), shows its status messages as progress, and, when its time runs
// out, ends with task_running while the task runs on; the Go client
// returns a *client.TaskRunningError.
func TestTaskCallStream(t *testing.T) {
	t.Parallel()
	e, ts, c := taskEnv(t, false, 300*time.Millisecond)
	ctx := testCtx(t)
	req, err := http.NewRequestWithContext(ctx, "POST", e.ts.URL+"/agents/test/a/servers/ts/tools/call", strings.NewReader(`{"name":"work","timeoutMs":60000}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	events := make(chan api.CallEvent)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var ev api.CallEvent
				if json.Unmarshal([]byte(data), &ev) == nil {
					events <- ev
				}
			}
		}
	}()
	next := func(typ string) api.CallEvent {
		t.Helper()
		for ev := range events {
			if ev.Type == typ {
				return ev
			}
		}
		t.Fatalf("no %s event", typ)
		return api.CallEvent{}
	}
	ev := next(api.CallEventTask)
	if ev.Task == nil || ev.Task.ServerID != "ts" || ev.Task.Tool != "work" {
		t.Fatalf("task event: %+v", ev)
	}
	ts.SetStatus(ev.Task.TaskID, "reading")
	if p := next(api.CallEventProgress); p.Message != "reading" {
		t.Fatalf("progress: %+v", p)
	}
	ts.Finish(ev.Task.TaskID, "streamed")
	if r := next(api.CallEventResult); !strings.Contains(string(r.Result), "streamed") {
		t.Fatalf("result: %s", r.Result)
	}

	// The time runs out (the server's CallTimeout): task_running, or
	// 202, through the Go client, and the tasks run on.
	// Calls without a deadline of their own: the server's bounds them.
	nodeadline, cancel := context.WithCancel(context.Background())
	defer cancel()
	var started api.Task
	_, err = c.CallToolWatched(nodeadline, "ts", "work", nil, &client.CallWatch{Task: func(t api.Task) { started = t }})
	var tre *client.TaskRunningError
	if !errors.As(err, &tre) || tre.Task.ID != started.ID || tre.Task.Tool != "work" || tre.Task.Done {
		t.Fatalf("CallToolWatched: %v (started %+v)", err, started)
	}
	_, err = c.CallTool(nodeadline, "ts", "work", nil)
	var tre2 *client.TaskRunningError
	if !errors.As(err, &tre2) || tre2.Task.ID == tre.Task.ID || tre2.Task.Status != api.TaskWorking {
		t.Fatalf("CallTool: %v", err)
	}
	for _, task := range []api.Task{tre.Task, tre2.Task} {
		ts.Finish(task.TaskID, "later "+task.ID)
		waitTask(t, ts, "the result of "+task.ID, func() bool {
			got, err := c.Task(ctx, task.ID)
			return err == nil && got.Done && strings.Contains(string(got.Result), "later "+task.ID)
		})
	}
	if got := ts.Cancelled(); len(got) != 0 {
		t.Errorf("cancelled on the server: %v", got)
	}
}
