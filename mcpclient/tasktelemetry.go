package mcpclient

import (
	"context"
	"errors"

	"github.com/agentmcp/agentmcp/mcpclient/internal/telemetry"
)

// This file ties tasks (tasks.go) to the Manager's telemetry: each wait
// for a task is an agentmcp.task span with its changes of status as
// events, and the tasks' metrics count starts, resumes, changes and ends
// (docs/OBSERVABILITY.md).

// taskTrace is the telemetry of one wait for a task.
type taskTrace struct {
	ctx context.Context // the wait's
	tt  *telemetry.TaskTrace
}

// traceTask starts the telemetry of a wait for h's task, created by the
// call (resumed false) or waited for by handle (WaitTask): it returns the
// wait's context, in the task's span, and opts with a TaskStatus hook that
// records each change of status. Call end with the wait's error. With the
// telemetry off, ctx and opts are returned as they are and the taskTrace
// is nil.
func (c *server) traceTask(ctx context.Context, h *TaskHandle, opts *CallOptions, resumed bool) (context.Context, *CallOptions, *taskTrace) {
	if c.m.tel.Off() {
		return ctx, opts, nil
	}
	var o CallOptions
	if opts != nil {
		o = *opts
	}
	ctx, tt := c.m.tel.StartTask(ctx, h.ServerID, h.Tool, c.listed("tools/call", h.Tool), h.TaskID, h.Protocol, h.CreatedAt, resumed)
	tr := &taskTrace{ctx: ctx, tt: tt}
	status := o.TaskStatus
	o.TaskStatus = func(t *Task) {
		tt.Status(ctx, string(t.Status), t.StatusMessage)
		if status != nil {
			status(t)
		}
	}
	return ctx, &o, tr
}

// end ends the task's telemetry with the status its outcome tells.
func (tr *taskTrace) end(err error) {
	if tr == nil {
		return
	}
	tr.tt.End(tr.ctx, taskOutcome(tr.ctx, err), err)
}

// taskOutcome is the final status of a task whose wait returned err.
func taskOutcome(ctx context.Context, err error) string {
	var te *TaskError
	switch {
	case err == nil:
		return string(TaskCompleted)
	case errors.Is(err, ErrTaskExpired):
		return "expired"
	case errors.As(err, &te):
		return string(te.Status)
	case ctx.Err() != nil, errors.Is(err, ErrClosed):
		return "abandoned" // the caller gave up (a call cancels the task too), or the Manager closed
	}
	return string(TaskFailed)
}
