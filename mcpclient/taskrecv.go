//lint:file-ignore SA1019 roots, sampling and logging are deprecated from 2026-07-28 on (SEP-2577); agentmcp speaks the earlier eras too, which have them
package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file is the client as the receiver of tasks (2025-11-25): a server
// that sees the client's tasks capability may send elicitation/create or
// sampling/createMessage as a task (params.task). The client answers at
// once with the task, runs the handler in the background, and answers the
// server's tasks/get, tasks/result, tasks/list and tasks/cancel about it.
// These requests are taken off the connection as it is read
// (sessionConn.Read), before go-sdk, which knows nothing of tasks.

// maxReceivedTasks bounds the tasks a session's server may have the client
// hold at once (running, or over and kept for their TTL).
const maxReceivedTasks = 32

// defaultReceivedTTL is how long a received task is kept when the server
// asks for no TTL, and the most it may ask for.
const (
	defaultReceivedTTL = 10 * time.Minute
	maxReceivedTTL     = time.Hour
)

// taskReceiver holds the tasks a session's server asked the client to run.
type taskReceiver struct {
	// mu guards the fields below. It is a leaf lock.
	mu    sync.Mutex
	seq   int
	tasks map[string]*receivedTask
}

// receivedTask is one task the server asked the client to run.
type receivedTask struct {
	id      string
	created time.Time
	ttl     time.Duration
	cancel  context.CancelFunc
	done    chan struct{} // closed when the task is over

	// Guarded by taskReceiver.mu:
	status  TaskStatus
	message string
	updated time.Time
	result  any            // the handler's result, when completed
	err     *jsonrpc.Error // the handler's error, when failed
}

func (t *receivedTask) wireLocked() map[string]any {
	w := map[string]any{
		"taskId":        t.id,
		"status":        t.status,
		"createdAt":     t.created.UTC().Format(time.RFC3339Nano),
		"lastUpdatedAt": t.updated.UTC().Format(time.RFC3339Nano),
		"ttl":           t.ttl.Milliseconds(),
		"pollInterval":  1000,
	}
	if t.message != "" {
		w["statusMessage"] = t.message
	}
	return w
}

// receive handles req, a request the server sent, when it is about tasks,
// and reports whether it did: it then answers it itself.
func (p *sessionConn) receive(req *jsonrpc.Request) bool {
	switch req.Method {
	case "elicitation/create", "sampling/createMessage":
		var probe struct {
			Task *taskMetadata `json:"task"`
		}
		if json.Unmarshal(req.Params, &probe) != nil || probe.Task == nil || p.s == nil || p.s.hooks == nil {
			return false
		}
		p.startReceived(req, probe.Task)
	case "tasks/get", "tasks/result", "tasks/cancel":
		var params struct {
			TaskID string `json:"taskId"`
		}
		_ = json.Unmarshal(req.Params, &params)
		p.taskRequest(req, params.TaskID)
	case "tasks/list":
		r := &p.s.tasks.recv
		r.mu.Lock()
		r.expireLocked(p.c.m.clock.Now())
		ids := slices.Sorted(maps.Keys(r.tasks))
		list := make([]map[string]any, 0, len(ids))
		for _, id := range ids {
			list = append(list, r.tasks[id].wireLocked())
		}
		r.mu.Unlock()
		p.answer(req, map[string]any{"tasks": list}, nil)
	default:
		return false
	}
	return true
}

// expireLocked drops the tasks over whose TTL has passed.
func (r *taskReceiver) expireLocked(now time.Time) {
	for id, t := range r.tasks {
		if t.status.Terminal() && now.After(t.created.Add(t.ttl)) {
			delete(r.tasks, id)
		}
	}
}

// startReceived creates the task of a task-augmented elicitation or
// sampling request, answers with it, and runs the handler in the
// background.
func (p *sessionConn) startReceived(req *jsonrpc.Request, meta *taskMetadata) {
	m := p.c.m
	now := m.clock.Now()
	ttl := time.Duration(meta.TTL) * time.Millisecond
	if ttl <= 0 {
		ttl = defaultReceivedTTL
	}
	ttl = min(ttl, maxReceivedTTL)
	r := &p.s.tasks.recv
	r.mu.Lock()
	r.expireLocked(now)
	if len(r.tasks) >= maxReceivedTasks {
		r.mu.Unlock()
		p.answer(req, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "too many tasks"})
		return
	}
	r.seq++
	ctx, cancel := context.WithCancel(m.ctx)
	t := &receivedTask{
		id: "agentmcp-task-" + strconv.Itoa(r.seq), created: now, updated: now, ttl: ttl,
		cancel: cancel, done: make(chan struct{}), status: TaskWorking,
	}
	if r.tasks == nil {
		r.tasks = make(map[string]*receivedTask)
	}
	r.tasks[t.id] = t
	created := map[string]any{"task": t.wireLocked()}
	r.mu.Unlock()

	h := p.s.hooks
	run := func() {
		defer close(t.done)
		defer cancel()
		var (
			res any
			err error
		)
		if req.Method == "elicitation/create" {
			var params mcp.ElicitParams
			if err = json.Unmarshal(req.Params, &params); err == nil {
				res, err = h.elicit(ctx, &mcp.ElicitRequest{Params: &params})
			}
		} else {
			var params mcp.CreateMessageParams
			if err = json.Unmarshal(req.Params, &params); err == nil {
				res, err = h.createMessage(ctx, &mcp.CreateMessageRequest{Params: &params})
			}
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		if t.status == TaskCancelled {
			return
		}
		t.updated = m.clock.Now()
		if err != nil {
			t.status, t.message = TaskFailed, err.Error()
			t.err = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
			return
		}
		t.status, t.result = TaskCompleted, res
	}
	p.answer(req, created, nil)
	if !m.goBackground(run) {
		cancel()
		r.mu.Lock()
		t.status, t.updated = TaskFailed, now
		t.err = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "client closing"}
		r.mu.Unlock()
		close(t.done)
	}
}

// taskRequest answers the server's tasks/get, tasks/result or tasks/cancel
// about one of the tasks it asked the client to run.
func (p *sessionConn) taskRequest(req *jsonrpc.Request, id string) {
	r := &p.s.tasks.recv
	r.mu.Lock()
	r.expireLocked(p.c.m.clock.Now())
	t := r.tasks[id]
	if t == nil {
		r.mu.Unlock()
		p.answer(req, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown task %q", id)})
		return
	}
	switch req.Method {
	case "tasks/get":
		w := t.wireLocked()
		r.mu.Unlock()
		p.answer(req, w, nil)
	case "tasks/cancel":
		if t.status.Terminal() {
			r.mu.Unlock()
			p.answer(req, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("task %q is %s", id, t.status)})
			return
		}
		t.status, t.updated = TaskCancelled, p.c.m.clock.Now()
		w := t.wireLocked()
		r.mu.Unlock()
		t.cancel()
		p.answer(req, w, nil)
	case "tasks/result":
		r.mu.Unlock()
		// It waits for the task to end: not on the reading goroutine.
		wait := func() {
			select {
			case <-t.done:
			case <-p.c.m.ctx.Done():
				return
			}
			r.mu.Lock()
			status, result, jerr := t.status, t.result, t.err
			r.mu.Unlock()
			switch status {
			case TaskCompleted:
				res, err := json.Marshal(result)
				if err != nil {
					p.answer(req, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()})
					return
				}
				var obj map[string]any
				_ = json.Unmarshal(res, &obj)
				if obj == nil {
					obj = map[string]any{}
				}
				obj["_meta"] = map[string]any{metaRelatedTask: map[string]any{"taskId": id}}
				p.answer(req, obj, nil)
			case TaskCancelled:
				p.answer(req, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("task %q was cancelled", id)})
			default:
				p.answer(req, nil, jerr)
			}
		}
		if !p.c.m.goBackground(wait) {
			p.answer(req, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "client closing"})
		}
	}
}

// answer writes the response to a request of the server that the client
// handled itself.
func (p *sessionConn) answer(req *jsonrpc.Request, result any, jerr *jsonrpc.Error) {
	resp := &jsonrpc.Response{ID: req.ID}
	if jerr != nil {
		resp.Error = jerr
	} else {
		data, err := json.Marshal(result)
		if err != nil {
			resp.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
		} else {
			resp.Result = data
		}
	}
	if err := p.Write(p.c.m.ctx, resp); err != nil {
		p.c.m.logger.Debug("cannot answer a server's task request", "server", p.c.ID(), "method", req.Method, "error", err)
	}
}
