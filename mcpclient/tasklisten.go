package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Status by the listen stream (2026-07-28): while a wait polls a task of
// the tasks extension, it also opens a subscriptions/listen asking for the
// task's notifications (filter notifications.taskIds). The server pushes
// notifications/tasks as the task changes; each wakes the wait, which
// polls at once (tasks/get stays the source of the task's state: a
// notification only says when to look). A server that refuses the listen,
// or ends it, leaves the wait polling at its interval, as without it. The
// listen ends with the wait (its stream closed, or notifications/cancelled
// on stdio).

// listenParams are the params of a subscriptions/listen for tasks.
type listenParams struct {
	mcp.ParamsBase
	Notifications taskFilter `json:"notifications"`
}

// taskFilter is the tasks extension's part of a listen's filter.
type taskFilter struct {
	TaskIDs []string `json:"taskIds"`
}

// listenTask opens a subscriptions/listen for the notifications of h's
// task, on the session's server, until ctx ends or the server ends or
// refuses it. It returns when the listen is over.
func (c *server) listenTask(ctx context.Context, h *TaskHandle) {
	s, err := c.liveSession(ctx)
	if err != nil {
		return
	}
	init := s.cs.InitializeResult()
	if init == nil || init.ProtocolVersion < protocolModern {
		return
	}
	p := &listenParams{Notifications: taskFilter{TaskIDs: []string{h.TaskID}}}
	p.Meta = mcp.Meta{metaClientCapabilities: modernTaskCaps(s.hooks.caps)}
	_, err = mcp.CallCustomMethod[*listenParams, *mcp.SubscriptionsListenResult](ctx, s.cs, "subscriptions/listen", p)
	if err != nil && ctx.Err() == nil {
		c.m.logger.Debug("no task notifications: polling only", "server", c.ID(), "task", h.TaskID, "error", err)
	}
}

// taskAck reports whether params, those of a
// notifications/subscriptions/acknowledged, acknowledge a listen for
// tasks (listenTask's): go-sdk, which did not open it, need not see it.
func taskAck(params json.RawMessage) bool {
	if !bytes.Contains(params, []byte(`"taskIds"`)) && !bytes.Contains(params, []byte(`\u`)) {
		return false // most acknowledgments: a list's listen, not read again
	}
	var p struct {
		Notifications map[string]json.RawMessage `json:"notifications"`
	}
	if json.Unmarshal(params, &p) != nil {
		return false
	}
	_, ok := p.Notifications["taskIds"]
	return ok
}
