package telemetry

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Tasks (MCP tasks: a tools/call the server runs as a task, polled until
// it ends). Each wait for a task, from its creation or from a resume by
// handle, is an agentmcp.task span (INTERNAL) whose events are the task's
// changes of status; the tasks/get, tasks/result, tasks/cancel and
// tasks/update requests inside it are its children, CLIENT spans as every
// request. The metrics count tasks started and resumed, changes of status
// and ends (agentmcp.client.tasks, by agentmcp.task.event and
// agentmcp.task.status), and the time from a task's creation to its end
// (agentmcp.client.task.duration, by final status).

// SpanTask is the span of a wait for a task.
const SpanTask = "agentmcp.task"

// Task attributes and event names.
const (
	attrTaskID      = attribute.Key("agentmcp.task.id")
	attrTaskStatus  = attribute.Key("agentmcp.task.status")
	attrTaskEvent   = attribute.Key("agentmcp.task.event")
	attrTaskResumed = attribute.Key("agentmcp.task.resumed")
	attrTaskMessage = attribute.Key("agentmcp.task.status_message")

	eventTaskStatus = "agentmcp.task.status"
)

// The values of agentmcp.task.event.
const (
	TaskStarted = "started" // the server created the task
	TaskResumed = "resumed" // a wait resumed by handle (WaitTask)
	TaskChanged = "status"  // its status or status message changed
	TaskEnded   = "ended"   // the wait ended: completed, failed, cancelled, expired or given up
)

// taskInstruments are the tasks' instruments, made on first use.
type taskInstruments struct {
	once     sync.Once
	events   metric.Int64Counter
	duration metric.Float64Histogram
}

// TaskTrace is the telemetry of one wait for a task. Its methods may be
// called from any goroutine; a nil *TaskTrace does nothing.
type TaskTrace struct {
	t       *Telemetry
	span    trace.Span
	attrs   []attribute.KeyValue // server and tool, for the metrics
	created time.Time

	mu     sync.Mutex
	status string
	ended  bool
}

// StartTask starts the span of a wait for task taskID of tool on server
// serverID, created at created (zero when unknown), and counts it started,
// or resumed. listed tells a tool the server listed: the metrics record
// any other as _OTHER, as they do for calls. Call End when the wait ends.
func (t *Telemetry) StartTask(ctx context.Context, serverID, tool string, listed bool, taskID, protocol string, created time.Time, resumed bool) (context.Context, *TaskTrace) {
	if t == nil || t.off {
		return ctx, nil
	}
	ti := t.taskInstruments()
	metricTool := tool
	if !listed {
		metricTool = OtherName
	}
	attrs := []attribute.KeyValue{AttrServerID.String(serverID), attrToolName.String(metricTool)}
	tt := &TaskTrace{t: t, attrs: attrs, created: created, status: "working"}
	if t.Traced() {
		ctx, tt.span = t.tracer.Start(ctx, SpanTask, internalSpan...)
		if tt.span.IsRecording() {
			tt.span.SetAttributes(AttrServerID.String(serverID), attrToolName.String(tool), attrTaskID.String(taskID), AttrProtocolVersion.String(protocol), attrTaskResumed.Bool(resumed))
		}
	}
	event := TaskStarted
	if resumed {
		event = TaskResumed
	}
	ti.events.Add(ctx, 1, metric.WithAttributes(append(attrs, attrTaskEvent.String(event), attrTaskStatus.String("working"))...))
	return ctx, tt
}

func (t *Telemetry) taskInstruments() *taskInstruments {
	ti := &t.tasks
	ti.once.Do(func() {
		meter := t.meter
		ti.events = counter(meter, "agentmcp.client.tasks", "{event}",
			"Tasks started, resumed, changed (status or status message) and ended, by agentmcp.task.event and agentmcp.task.status.")
		ti.duration = histogram(meter, "agentmcp.client.task.duration",
			"The time from a task's creation on the server to the end of its wait, by final status.")
	})
	return ti
}

// Status records a change of the task's status or status message: a span
// event (with the message only when content is recorded: it is the
// server's text) and a count.
func (tt *TaskTrace) Status(ctx context.Context, status, message string) {
	if tt == nil {
		return
	}
	tt.mu.Lock()
	tt.status = status
	tt.mu.Unlock()
	if tt.span != nil && tt.span.IsRecording() {
		attrs := []attribute.KeyValue{attrTaskStatus.String(status)}
		if tt.t.content && message != "" {
			attrs = append(attrs, attrTaskMessage.String(message))
		}
		tt.span.AddEvent(eventTaskStatus, trace.WithAttributes(attrs...))
	}
	tt.t.tasks.events.Add(ctx, 1, metric.WithAttributes(append(tt.attrs, attrTaskEvent.String(TaskChanged), attrTaskStatus.String(status))...))
}

// End ends the wait with the task's final status ("completed", "failed",
// "cancelled", "expired", or "abandoned" when the wait stopped without
// the task's end) and the wait's error: it ends the span and counts the
// end. A second End does nothing.
func (tt *TaskTrace) End(ctx context.Context, status string, err error) {
	if tt == nil {
		return
	}
	tt.mu.Lock()
	if tt.ended {
		tt.mu.Unlock()
		return
	}
	tt.ended = true
	tt.mu.Unlock()
	attrs := append(tt.attrs, attrTaskStatus.String(status))
	tt.t.tasks.events.Add(ctx, 1, metric.WithAttributes(append(attrs, attrTaskEvent.String(TaskEnded))...))
	if !tt.created.IsZero() {
		tt.t.tasks.duration.Record(ctx, time.Since(tt.created).Seconds(), metric.WithAttributes(attrs...))
	}
	if tt.span == nil {
		return
	}
	if tt.span.IsRecording() {
		tt.span.SetAttributes(attrTaskStatus.String(status))
		if status != "completed" {
			tt.span.SetStatus(codes.Error, status)
		}
	}
	if err != nil {
		tt.t.End(tt.span, err)
		return
	}
	tt.span.End()
}
