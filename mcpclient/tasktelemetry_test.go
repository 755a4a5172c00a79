package mcpclient_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/internal/testing/oteltest"
	"github.com/agentmcp/agentmcp/mcpclient"
)

// TestTaskTelemetry: a call that runs as a task is an agentmcp.task span,
// child of the caller's context, whose events are the task's changes of
// status and whose tasks/get requests are its children; the metrics count
// it started, changed and ended (completed, or cancelled), and its
// duration. A wait by handle (WaitTask) counts as resumed.
func TestTaskTelemetry(t *testing.T) {
	t.Parallel()
	rec := oteltest.New(t)
	ts := mcptest.NewTaskServer(false)
	srv := mcptest.ServeHandler(t, ts)
	m := newManager(t, &mcpclient.Options{
		TracerProvider: rec.TracerProvider, MeterProvider: rec.MeterProvider, RecordContent: true,
		Tasks: mcpclient.TaskOptions{MinPollInterval: 5 * time.Millisecond, PollInterval: 5 * time.Millisecond},
	})
	connectReady(t, m, "ts", mcpclient.ServerOptions{URL: srv.URL})
	ctx := testCtx(t)
	ctx, parent := rec.TracerProvider.Tracer("test").Start(ctx, "caller")

	done := make(chan error, 1)
	go func() {
		_, err := m.CallTool(ctx, "ts", "work", nil, nil)
		done <- err
	}()
	waitServer(t, ts, func() bool { return slices.Contains(ts.Methods(), "tasks/get") })
	first := ts.Tasks()[0]
	ts.SetStatus(first, "digging")
	n := len(ts.Methods())
	waitServer(t, ts, func() bool { return len(ts.Methods()) > n+1 })
	ts.Finish(first, "found")
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	// A second task, waited for by handle and cancelled.
	h, _, err := m.StartTask(ctx, "ts", "work", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() {
		_, err := m.WaitTask(ctx, h, nil)
		waited <- err
	}()
	if err := m.CancelTask(ctx, h); err != nil {
		t.Fatal(err)
	}
	if err := <-waited; !errors.Is(err, mcpclient.ErrTaskCancelled) {
		t.Fatalf("WaitTask: %v", err)
	}
	parent.End()

	var tasks []sdktrace.ReadOnlySpan
	for _, s := range rec.Spans.Ended() {
		if s.Name() == "agentmcp.task" {
			tasks = append(tasks, s)
		}
	}
	if len(tasks) != 2 {
		t.Fatalf("%d agentmcp.task spans, want 2", len(tasks))
	}
	span := tasks[0]
	if span.Parent().SpanID() != parent.SpanContext().SpanID() {
		t.Error("the task's span is not a child of the caller's")
	}
	if !oteltest.HasAttrs(span.Attributes(), map[string]string{
		"agentmcp.server.id": "ts", "gen_ai.tool.name": "work", "agentmcp.task.id": first,
		"agentmcp.task.status": "completed", "agentmcp.task.resumed": "false", "mcp.protocol.version": "2025-11-25",
	}) {
		t.Errorf("span attributes %v", oteltest.AttrMap(span.Attributes()))
	}
	var messages []string
	for _, ev := range span.Events() {
		if ev.Name == "agentmcp.task.status" {
			messages = append(messages, oteltest.AttrMap(ev.Attributes)["agentmcp.task.status_message"])
		}
	}
	if !slices.Contains(messages, "digging") {
		t.Errorf("status events' messages %q; want digging", messages)
	}
	polls := 0
	for _, s := range rec.Spans.Ended() {
		if s.Parent().SpanID() == span.SpanContext().SpanID() && oteltest.AttrMap(s.Attributes())["mcp.method.name"] == "tasks/get" {
			polls++
		}
	}
	if polls == 0 {
		t.Error("no tasks/get span is a child of the task's")
	}
	if a := oteltest.AttrMap(tasks[1].Attributes()); a["agentmcp.task.status"] != "cancelled" || a["agentmcp.task.resumed"] != "true" || tasks[1].Status().Code.String() != "Error" {
		t.Errorf("the cancelled task's span: %v, %v", a, tasks[1].Status())
	}

	var rm metricdata.ResourceMetrics
	if err := rec.Reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		event, status string
		want          int64
	}{
		{"started", "working", 1},
		{"resumed", "working", 1},
		{"ended", "completed", 1},
		{"ended", "cancelled", 1},
	} {
		if got := oteltest.IntValue(rm, "agentmcp.client.tasks", map[string]string{"agentmcp.task.event": c.event, "agentmcp.task.status": c.status, "agentmcp.server.id": "ts"}); got != c.want {
			t.Errorf("agentmcp.client.tasks{%s, %s} = %d, want %d", c.event, c.status, got, c.want)
		}
	}
	// Each wait's first poll, and "digging" unless the first poll saw it.
	if got := oteltest.IntValue(rm, "agentmcp.client.tasks", map[string]string{"agentmcp.task.event": "status", "agentmcp.task.status": "working"}); got < 2 || got > 3 {
		t.Errorf("agentmcp.client.tasks{status, working} = %d, want 2 or 3", got)
	}
	if got := oteltest.HistogramCount(rm, "agentmcp.client.task.duration", map[string]string{"agentmcp.task.status": "completed"}); got != 1 {
		t.Errorf("agentmcp.client.task.duration{completed} count %d, want 1", got)
	}
}
