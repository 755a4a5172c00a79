package gateway_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/gateway"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/store/sqlite"
)

// taskGateway is a gateway in front of an agent whose one server, "ts",
// is a TaskServer (2025-11-25 tasks), polled every few milliseconds.
func taskGateway(t *testing.T) (*agent.Agent, *mcptest.TaskServer, string) {
	t.Helper()
	ctx := testCtx(t)
	ts := mcptest.NewTaskServer(false)
	hs := mcptest.ServeHandler(t, ts)
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "agents.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	fast := &mcpclient.Options{Tasks: mcpclient.TaskOptions{MinPollInterval: 5 * time.Millisecond, PollInterval: 5 * time.Millisecond}}
	a, err := agent.Open(ctx, st, "test", "tasks", &agent.Options{Manager: fast})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(context.Background()) })
	if _, err := a.AddMCPServer(ctx, "ts", hs.URL, &agent.AddOptions{ID: "ts"}); err != nil {
		t.Fatal(err)
	}
	g := gateway.New(a, nil)
	t.Cleanup(func() { g.Close(context.Background()) })
	return a, ts, mcptest.ServeHandler(t, g).URL
}

// waitTaskServer waits, waking at each change of ts and every few
// milliseconds (the agent's writes are not ts's changes), until cond holds.
func waitTaskServer(t *testing.T, ts *mcptest.TaskServer, what string, cond func() bool) {
	t.Helper()
	ctx := testCtx(t)
	tick := time.NewTicker(10 * time.Millisecond)
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

// TestGatewayHoldsTasks: a client that does not declare tasks (go-sdk's
// client, in either era) calls a tool that its upstream server runs as a
// task as a plain call: the gateway holds it until the task's result.
func TestGatewayHoldsTasks(t *testing.T) {
	t.Parallel()
	for _, era := range []string{eraSessions, eraStateless} {
		t.Run(era, func(t *testing.T) {
			t.Parallel()
			_, ts, url := taskGateway(t)
			c := mcp.NewClient(&mcp.Implementation{Name: "downstream", Version: "1"}, nil)
			cs, err := c.Connect(testCtx(t), &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: era})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			type outcome struct {
				res *mcp.CallToolResult
				err error
			}
			done := make(chan outcome, 1)
			go func() {
				res, err := cs.CallTool(testCtx(t), &mcp.CallToolParams{Name: "tool_ts_work", Arguments: map[string]any{}})
				done <- outcome{res, err}
			}()
			waitTaskServer(t, ts, "the task", func() bool { return len(ts.Tasks()) == 1 })
			ts.Finish(ts.Tasks()[0], "held to the end")
			o := <-done
			if o.err != nil || o.res.IsError || text(o.res) != "held to the end" {
				t.Fatalf("call = %+v, %v", o.res, o.err)
			}
		})
	}
}

// TestGatewayPassesTasks: a 2026-07-28 client that declares the tasks
// extension (a Manager) gets the upstream task as the gateway's: its call
// returns a task at once ("ts:ID"), which it polls through the gateway
// until the result; its cancel reaches the upstream server (tasks/cancel);
// another user cannot see it.
func TestGatewayPassesTasks(t *testing.T) {
	t.Parallel()
	a, ts, url := taskGateway(t)
	ctx := testCtx(t)
	m := mcpclient.New(&mcpclient.Options{Tasks: mcpclient.TaskOptions{MinPollInterval: 5 * time.Millisecond, PollInterval: 5 * time.Millisecond}})
	defer m.Close(context.Background())
	if _, err := m.RegisterServer(ctx, "gw", mcpclient.ServerOptions{Name: "gw", URL: url}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.ConnectToServer(ctx, "gw"); err != nil {
		t.Fatal(err)
	}
	if !m.OffersTasks("gw") {
		t.Fatal("the gateway does not offer the tasks extension")
	}

	// A call that becomes a task, polled through the gateway.
	started := make(chan *mcpclient.TaskHandle, 1)
	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := m.CallTool(ctx, "gw", "tool_ts_work", map[string]any{}, &mcpclient.CallOptions{TaskStarted: func(h *mcpclient.TaskHandle) { started <- h }})
		done <- outcome{res, err}
	}()
	var h *mcpclient.TaskHandle
	select {
	case h = <-started:
	case o := <-done:
		t.Fatalf("the call ended without a task: %+v, %v", o.res, o.err)
	}
	upstream := ts.Tasks()[0]
	if h.TaskID != "ts:"+upstream {
		t.Fatalf("the gateway's task id %q; want ts:%s", h.TaskID, upstream)
	}
	if stored, err := a.Task(ctx, "ts", upstream); err != nil || stored.Done || !strings.HasPrefix(stored.Correlation, "mcp:") {
		t.Fatalf("the agent's task: %+v, %v", stored, err)
	}
	ts.SetStatus(upstream, "half way")
	waitTaskServer(t, ts, "the status through the gateway", func() bool {
		got, err := m.GetTask(ctx, h)
		return err == nil && got.StatusMessage == "half way"
	})
	ts.Finish(upstream, "passed through")
	if o := <-done; o.err != nil || text(o.res) != "passed through" {
		t.Fatalf("call = %+v, %v", o.res, o.err)
	}

	// Cancel, through the gateway, reaches the upstream server.
	h2, res, err := m.StartTask(ctx, "gw", "tool_ts_work", map[string]any{}, nil)
	if err != nil || h2 == nil {
		t.Fatalf("StartTask = %v, %+v, %v", h2, res, err)
	}
	second := strings.TrimPrefix(h2.TaskID, "ts:")
	if err := m.CancelTask(ctx, h2); err != nil {
		t.Fatal(err)
	}
	if got := ts.Cancelled(); !slices.Equal(got, []string{second}) {
		t.Fatalf("cancelled upstream: %v, want %s", got, second)
	}
	if _, err := m.WaitTask(ctx, h2, nil); !errors.Is(err, mcpclient.ErrTaskCancelled) {
		t.Fatalf("WaitTask after the cancel: %v", err)
	}

	// A task the gateway's clients did not start is unknown to them.
	go a.CallTool(ctx, "ts", "work", nil, nil)
	waitTaskServer(t, ts, "the agent's own task", func() bool { return len(ts.Tasks()) == 3 })
	own := ts.Tasks()[2]
	waitTaskServer(t, ts, "the agent's own task stored", func() bool {
		_, err := a.Task(ctx, "ts", own)
		return err == nil
	})
	if _, err := m.GetTask(ctx, &mcpclient.TaskHandle{ServerID: "gw", Tool: "tool_ts_work", TaskID: "ts:" + own, Protocol: h.Protocol}); err == nil {
		t.Error("a client read a task it did not start")
	}
	ts.Finish(own, "")
}

// TestGatewayOffersTasksOnlyWithTasks: the gateway offers the tasks
// extension only while one of its agent's servers offers tasks, so that
// clients that declare it do not send every call of a gateway without
// tasks as a task-augmented one.
func TestGatewayOffersTasksOnlyWithTasks(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil) // alpha and beta: no tasks
	cs := e.connect(eraStateless, nil)
	if _, ok := cs.InitializeResult().Capabilities.Extensions["io.modelcontextprotocol/tasks"]; ok {
		t.Error("a gateway without tasks offers the tasks extension")
	}
	_, _, url := taskGateway(t)
	c := mcp.NewClient(&mcp.Implementation{Name: "downstream", Version: "1"}, nil)
	cs2, err := c.Connect(testCtx(t), &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: eraStateless})
	if err != nil {
		t.Fatal(err)
	}
	defer cs2.Close()
	if _, ok := cs2.InitializeResult().Capabilities.Extensions["io.modelcontextprotocol/tasks"]; !ok {
		t.Error("a gateway with a server of tasks does not offer the tasks extension")
	}
}
