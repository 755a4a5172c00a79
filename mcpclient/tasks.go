//lint:file-ignore SA1019 roots, sampling and logging are deprecated from 2026-07-28 on (SEP-2577); agentmcp speaks the earlier eras too, which have them
package mcpclient

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentmcp/agentmcp/mcpclient/transport"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TaskSupport is a tool's execution.taskSupport (2025-11-25): whether it
// may, or must, be called as a task.
type TaskSupport string

const (
	TaskForbidden TaskSupport = "forbidden" // the default
	TaskOptional  TaskSupport = "optional"
	TaskRequired  TaskSupport = "required"
)

// TaskStatus is the status of a task.
type TaskStatus string

const (
	TaskWorking       TaskStatus = "working"
	TaskInputRequired TaskStatus = "input_required"
	TaskCompleted     TaskStatus = "completed"
	TaskFailed        TaskStatus = "failed"
	TaskCancelled     TaskStatus = "cancelled"
)

// Terminal reports whether a task in status s is over.
func (s TaskStatus) Terminal() bool {
	return s == TaskCompleted || s == TaskFailed || s == TaskCancelled
}

// Task is a task's state as the server last reported it.
type Task struct {
	ID            string
	Status        TaskStatus
	StatusMessage string
	CreatedAt     time.Time
	LastUpdatedAt time.Time
	// TTL is how long the server keeps the task from its creation; zero
	// means without limit.
	TTL time.Duration
	// PollInterval is the interval the server suggests between polls;
	// zero means none.
	PollInterval time.Duration
}

// TaskHandle names a tool call that runs as a task on a server: what a
// caller keeps to poll it, cancel it or fetch its result later, from this
// process or, after a restart, another (WaitTask). It is plain data, safe
// to encode as JSON.
type TaskHandle struct {
	ServerID string `json:"serverId"`
	Tool     string `json:"tool"`
	TaskID   string `json:"taskId"`
	// Protocol is the protocol version of the session that created the
	// task: "2026-07-28" tasks are those of the tasks extension, earlier
	// ones those of 2025-11-25.
	Protocol string `json:"protocol"`
	// ArgumentsHash is the hex SHA-256 of the call's arguments as sent.
	ArgumentsHash string    `json:"argumentsHash"`
	CreatedAt     time.Time `json:"createdAt"`
	// TTL and PollInterval are the server's, from the task's creation.
	TTL          time.Duration `json:"ttl,omitempty"`
	PollInterval time.Duration `json:"pollInterval,omitempty"`
}

func (h *TaskHandle) modern() bool { return h.Protocol >= protocolModern }

// TaskOptions configures tasks for a Manager. Every field is optional.
type TaskOptions struct {
	// Prefer calls tools whose taskSupport is optional as tasks, as
	// CallOptions.Task does for one call. False calls them as tasks only
	// when asked.
	Prefer bool
	// TTL is the retention asked of servers for the tasks of legacy calls.
	// Zero asks for none: the server's default.
	TTL time.Duration
	// MinPollInterval and MaxPollInterval bound the interval between two
	// polls of a task, whatever the server suggests. Zero means 250 ms and
	// 30 s.
	MinPollInterval time.Duration
	MaxPollInterval time.Duration
	// PollInterval is the interval used when the server suggests none.
	// Zero means 1 s.
	PollInterval time.Duration
}

func (o TaskOptions) withDefaults() TaskOptions {
	if o.MinPollInterval <= 0 {
		o.MinPollInterval = 250 * time.Millisecond
	}
	if o.MaxPollInterval <= 0 {
		o.MaxPollInterval = 30 * time.Second
	}
	if o.MaxPollInterval < o.MinPollInterval {
		o.MaxPollInterval = o.MinPollInterval
	}
	if o.PollInterval <= 0 {
		o.PollInterval = time.Second
	}
	return o
}

// Errors of tasks.
var (
	// ErrTasksUnsupported: the server, or the session's transport, does
	// not take task-augmented calls, or the tool does not.
	ErrTasksUnsupported = errors.New("mcpclient: tasks not supported")
	// ErrTaskCancelled: the task was cancelled.
	ErrTaskCancelled = errors.New("mcpclient: task cancelled")
	// ErrTaskExpired: the task outlived its TTL, or the server no longer
	// knows it.
	ErrTaskExpired = errors.New("mcpclient: task expired")
	// ErrTaskFailed: the task failed with an error (not a tool result
	// with IsError, which is a result).
	ErrTaskFailed = errors.New("mcpclient: task failed")
)

// TaskError is the error of a task that did not complete. It matches
// ErrTaskCancelled, ErrTaskExpired or ErrTaskFailed, and wraps the
// server's error when there is one (a *jsonrpc.Error).
type TaskError struct {
	ServerID string
	TaskID   string
	Status   TaskStatus
	Message  string // the task's status message, if any
	Kind     error  // ErrTaskCancelled, ErrTaskExpired or ErrTaskFailed
	Err      error  // the server's error, if any
}

func (e *TaskError) Error() string {
	msg := fmt.Sprintf("task %q on server %q: %s", e.TaskID, e.ServerID, e.Kind.Error())
	if e.Message != "" {
		msg += ": " + e.Message
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *TaskError) Unwrap() []error {
	if e.Err != nil {
		return []error{e.Kind, e.Err}
	}
	return []error{e.Kind}
}

// StartTask calls a tool as a task and returns its handle once the server
// has created it, without waiting for the task: WaitTask waits for it,
// GetTask polls it once and CancelTask cancels it. The tool must allow
// tasks (2025-11-25: taskSupport optional or required) on a server that
// takes them (2026-07-28: one that offers the tasks extension), else the
// error wraps ErrTasksUnsupported.
//
// A 2026-07-28 server may answer at once rather than create a task: the
// handle is then nil and the result is returned.
func (m *Manager) StartTask(ctx context.Context, serverID, name string, args any, opts *CallOptions) (*TaskHandle, *mcp.CallToolResult, error) {
	c, err := m.lookup(serverID)
	if err != nil {
		return nil, nil, err
	}
	s, err := c.liveSession(ctx)
	if err != nil {
		return nil, nil, err
	}
	if mode := c.taskMode(s, name, true); mode == taskNone {
		return nil, nil, fmt.Errorf("tools/call %q on server %q: %w", name, c.ID(), ErrTasksUnsupported)
	}
	h, res, err := c.startTask(ctx, name, args, opts)
	if h == nil {
		res, err = c.checkResult(name, res, err) // output.go
	}
	return h, res, err
}

// WaitTask waits for the task of h to end and returns its result: it polls
// the task at the interval the server suggests (within
// TaskOptions.MinPollInterval and MaxPollInterval), answers its requests
// for input with the elicitation and sampling handlers, and fetches the
// result. opts.Progress and opts.TaskStatus, if set, hear of every change
// of status. It works on a handle from an earlier process too, for as long
// as the server keeps the task.
//
// Cancelling ctx stops the wait, not the task: CancelTask cancels it. A
// task that ends without a result returns a *TaskError.
func (m *Manager) WaitTask(ctx context.Context, h *TaskHandle, opts *CallOptions) (*mcp.CallToolResult, error) {
	c, err := m.lookup(h.ServerID)
	if err != nil {
		return nil, err
	}
	ctx, opts, tr := c.traceTask(ctx, h, opts, true) // tasktelemetry.go
	res, err := c.waitTask(ctx, h, opts)
	tr.end(err)
	return c.checkResult(h.Tool, res, err) // output.go
}

// GetTask polls the task of h once.
func (m *Manager) GetTask(ctx context.Context, h *TaskHandle) (*Task, error) {
	c, err := m.lookup(h.ServerID)
	if err != nil {
		return nil, err
	}
	w, err := c.getTask(ctx, h)
	if err != nil {
		return nil, err
	}
	return w.task(), nil
}

// CancelTask asks the server to cancel the task of h (tasks/cancel). A
// task already over is not an error.
func (m *Manager) CancelTask(ctx context.Context, h *TaskHandle) error {
	c, err := m.lookup(h.ServerID)
	if err != nil {
		return err
	}
	return c.cancelTask(ctx, h)
}

// taskPath is how a call goes: plainly, or as a task of either era.
type taskPath int

const (
	taskNone   taskPath = iota
	taskLegacy          // 2025-11-25: params.task, tasks/get, tasks/result
	taskModern          // 2026-07-28: the tasks extension
)

// taskMode decides how a call of the tool name on s goes. asked is the
// caller's wish for a task (CallOptions.Task, TaskOptions.Prefer).
func (c *server) taskMode(s *session, name string, asked bool) taskPath {
	if _, ok := s.conn.(*sessionConn); !ok {
		return taskNone // go-sdk's own transport: methodTaskCall cannot be renamed
	}
	init := s.cs.InitializeResult()
	if init == nil {
		return taskNone
	}
	if init.ProtocolVersion >= protocolModern {
		if init.Capabilities == nil {
			return taskNone
		}
		if _, ok := init.Capabilities.Extensions[tasksExtension]; ok {
			return taskModern // the server decides
		}
		return taskNone
	}
	t := &s.tasks
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.toolsCall {
		return taskNone
	}
	switch t.support[name] {
	case TaskRequired:
		return taskLegacy
	case TaskOptional:
		if asked {
			return taskLegacy
		}
	}
	return taskNone
}

// callAsTask is CallTool for a server that has shown tasks: when the call
// goes as a task, it starts it, waits for it (cancelling it on the server
// when ctx ends first) and returns its result, with handled true.
func (c *server) callAsTask(ctx context.Context, name string, args any, opts *CallOptions) (*mcp.CallToolResult, error, bool) {
	s, err := c.liveSession(ctx)
	if err != nil {
		return nil, err, true
	}
	asked := c.m.opts.Tasks.Prefer || (opts != nil && opts.Task)
	if c.taskMode(s, name, asked) == taskNone {
		return nil, nil, false
	}
	h, res, err := c.startTask(ctx, name, args, opts)
	if err != nil || h == nil {
		res, err = c.checkResult(name, res, err) // output.go
		return res, err, true
	}
	ctx, opts, tr := c.traceTask(ctx, h, opts, false) // tasktelemetry.go
	res, err = c.waitTask(ctx, h, opts)
	tr.end(err)
	if err != nil && ctx.Err() != nil {
		// The caller gave up: so does the server.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		if cerr := c.cancelTask(cctx, h); cerr != nil {
			c.m.logger.Debug("cannot cancel a task", "server", c.ID(), "task", h.TaskID, "error", cerr)
		}
		cancel()
	}
	res, err = c.checkResult(name, res, err) // output.go
	return res, err, true
}

// startTask sends the task-augmented tools/call.
func (c *server) startTask(ctx context.Context, name string, args any, opts *CallOptions) (*TaskHandle, *mcp.CallToolResult, error) {
	if m, ok := args.(map[string]any); args == nil || (ok && m == nil) {
		args = map[string]any{}
	}
	argBytes, err := json.Marshal(args)
	if err != nil {
		return nil, nil, fmt.Errorf("tools/call %q on server %q: arguments: %w", name, c.ID(), err)
	}
	sum := sha256.Sum256(argBytes)
	ctx = transport.WithCall(ctx, &transport.Call{Name: name, Tool: c.tool(name)})
	var (
		protocol string
		created  *wireTask
		result   *mcp.CallToolResult
	)
	_, err = doCall(ctx, c, "tools/call", name, false, nil, func(ctx context.Context, s *session, _ mcp.Meta) (struct{}, error) {
		protocol = s.cs.InitializeResult().ProtocolVersion
		modern := protocol >= protocolModern
		p := &taskParams{Name: name, Arguments: json.RawMessage(argBytes)}
		if modern {
			p.Meta = mcp.Meta{metaClientCapabilities: modernTaskCaps(s.hooks.caps)}
		} else {
			p.Task = &taskMetadata{TTL: c.m.opts.Tasks.TTL.Milliseconds()}
		}
		for round := 0; ; round++ {
			raw, err := mcp.CallCustomMethod[*taskParams, *rawResult](ctx, s.cs, methodTaskCall, p)
			if err != nil {
				return struct{}{}, err
			}
			var probe struct {
				ResultType string    `json:"resultType"`
				Task       *wireTask `json:"task"`
			}
			if err := json.Unmarshal(raw.Raw, &probe); err != nil {
				return struct{}{}, fmt.Errorf("%w: %w", ErrProtocol, err)
			}
			switch {
			case !modern && probe.Task != nil:
				created = probe.Task
			case modern && probe.ResultType == "task":
				created = &wireTask{}
				if err := json.Unmarshal(raw.Raw, created); err != nil {
					return struct{}{}, fmt.Errorf("%w: %w", ErrProtocol, err)
				}
			case modern && probe.ResultType == "input_required":
				var ir struct {
					InputRequests mcp.InputRequestMap `json:"inputRequests"`
					RequestState  string              `json:"requestState"`
				}
				if err := json.Unmarshal(raw.Raw, &ir); err != nil {
					return struct{}{}, fmt.Errorf("%w: %w", ErrProtocol, err)
				}
				if round >= 10 {
					return struct{}{}, fmt.Errorf("%w: more than 10 rounds of input", ErrProtocol)
				}
				responses, err := s.hooks.fulfil(ctx, ir.InputRequests)
				if err != nil {
					return struct{}{}, err
				}
				p.InputResponses, p.RequestState = responses, ir.RequestState
				continue
			case modern && probe.ResultType != "" && probe.ResultType != "complete":
				return struct{}{}, fmt.Errorf("%w: result type %q", ErrProtocol, probe.ResultType)
			default:
				result = &mcp.CallToolResult{}
				if err := result.UnmarshalJSON(raw.Raw); err != nil {
					return struct{}{}, fmt.Errorf("%w: %w", ErrProtocol, err)
				}
			}
			return struct{}{}, nil
		}
	})
	if err != nil || result != nil {
		return nil, result, err
	}
	if created.TaskID == "" {
		return nil, nil, fmt.Errorf("tools/call %q on server %q: %w: a task without an id", name, c.ID(), ErrProtocol)
	}
	t := created.task()
	h := &TaskHandle{
		ServerID: c.ID(), Tool: name, TaskID: t.ID, Protocol: protocol,
		ArgumentsHash: hex.EncodeToString(sum[:]), CreatedAt: t.CreatedAt,
		TTL: t.TTL, PollInterval: t.PollInterval,
	}
	if h.CreatedAt.IsZero() {
		h.CreatedAt = c.m.clock.Now()
	}
	if opts != nil && opts.TaskStarted != nil {
		opts.TaskStarted(h)
	}
	return h, nil, nil
}

// taskRequest sends one of the tasks/* requests about h's task.
func (c *server) taskRequest(ctx context.Context, h *TaskHandle, method string, p *taskParams) (json.RawMessage, error) {
	p.TaskID = h.TaskID
	ctx = transport.WithCall(ctx, &transport.Call{Name: h.TaskID})
	raw, err := doCall(ctx, c, method, h.TaskID, method != "tasks/update", nil, func(ctx context.Context, s *session, _ mcp.Meta) (*rawResult, error) {
		if s.cs.InitializeResult().ProtocolVersion >= protocolModern {
			p.Meta = mcp.Meta{metaClientCapabilities: modernTaskCaps(s.hooks.caps)}
		}
		return mcp.CallCustomMethod[*taskParams, *rawResult](ctx, s.cs, method, p)
	})
	if err != nil {
		return nil, err
	}
	return raw.Raw, nil
}

// getTask polls h's task once.
func (c *server) getTask(ctx context.Context, h *TaskHandle) (*wireTask, error) {
	raw, err := c.taskRequest(ctx, h, "tasks/get", &taskParams{})
	if err != nil {
		if isInvalidParams(err) {
			return nil, &TaskError{ServerID: c.ID(), TaskID: h.TaskID, Kind: ErrTaskExpired, Err: err}
		}
		return nil, err
	}
	var w wireTask
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, fmt.Errorf("tasks/get %q on server %q: %w: %w", h.TaskID, c.ID(), ErrProtocol, err)
	}
	if w.TaskID == "" {
		w.TaskID = h.TaskID
	}
	return &w, nil
}

// cancelTask sends tasks/cancel for h's task.
func (c *server) cancelTask(ctx context.Context, h *TaskHandle) error {
	_, err := c.taskRequest(ctx, h, "tasks/cancel", &taskParams{})
	if err != nil && isInvalidParams(err) {
		return nil // over already (or gone)
	}
	return err
}

// isInvalidParams reports whether err is the server's -32602, with which
// tasks/* answer for a task they do not know, or one already over.
func isInvalidParams(err error) bool {
	var je *jsonrpc.Error
	return errors.As(err, &je) && je.Code == jsonrpc.CodeInvalidParams
}

// waitTask polls h's task until it ends, and returns its result.
func (c *server) waitTask(ctx context.Context, h *TaskHandle, opts *CallOptions) (*mcp.CallToolResult, error) {
	topts := c.m.opts.Tasks.withDefaults()
	wake := make(chan struct{}, 1)
	c.taskWake.Store(h.TaskID, wake)
	defer c.taskWake.Delete(h.TaskID)
	if h.modern() {
		// Status by the listen stream as well (tasklisten.go).
		lctx, stop := context.WithCancel(ctx)
		listened := make(chan struct{})
		go func() {
			defer close(listened)
			c.listenTask(lctx, h)
		}()
		defer func() {
			stop()
			<-listened
		}()
	}

	var (
		last     TaskStatus
		lastMsg  string
		changes  float64
		answered = map[string]bool{}
	)
	for {
		w, err := c.getTask(ctx, h)
		if err != nil {
			return nil, err
		}
		t := w.task()
		if t.Status != last || t.StatusMessage != lastMsg {
			last, lastMsg = t.Status, t.StatusMessage
			changes++
			if opts != nil && opts.TaskStatus != nil {
				opts.TaskStatus(t)
			}
			if opts != nil && opts.Progress != nil && t.StatusMessage != "" {
				opts.Progress(&mcp.ProgressNotificationParams{ProgressToken: h.TaskID, Progress: changes, Message: t.StatusMessage})
			}
		}
		if h.modern() {
			switch t.Status {
			case TaskCompleted:
				res := &mcp.CallToolResult{}
				if len(w.Result) == 0 {
					return nil, fmt.Errorf("tasks/get %q on server %q: %w: completed without a result", h.TaskID, c.ID(), ErrProtocol)
				}
				if err := res.UnmarshalJSON(w.Result); err != nil {
					return nil, fmt.Errorf("tasks/get %q on server %q: %w: %w", h.TaskID, c.ID(), ErrProtocol, err)
				}
				return res, nil
			case TaskFailed:
				te := &TaskError{ServerID: c.ID(), TaskID: h.TaskID, Status: t.Status, Message: t.StatusMessage, Kind: ErrTaskFailed}
				if w.Error != nil {
					te.Err = w.Error
				}
				return nil, te
			case TaskCancelled:
				return nil, &TaskError{ServerID: c.ID(), TaskID: h.TaskID, Status: t.Status, Message: t.StatusMessage, Kind: ErrTaskCancelled}
			case TaskInputRequired:
				pending := mcp.InputRequestMap{}
				for id, r := range w.InputRequests {
					if !answered[id] {
						pending[id] = r
					}
				}
				if len(pending) > 0 {
					if err := c.answerTask(ctx, h, pending); err != nil {
						return nil, err
					}
					for id := range pending {
						answered[id] = true
					}
					continue // poll again at once
				}
			}
		} else {
			switch t.Status {
			case TaskCancelled:
				return nil, &TaskError{ServerID: c.ID(), TaskID: h.TaskID, Status: t.Status, Message: t.StatusMessage, Kind: ErrTaskCancelled}
			case TaskCompleted, TaskFailed, TaskInputRequired:
				// tasks/result returns once the task is over; in
				// input_required, the server asks for the input while it
				// waits (elicitation/create, sampling/createMessage).
				return c.taskResult(ctx, h, t)
			}
		}
		if t.TTL > 0 && !t.CreatedAt.IsZero() && c.m.clock.Now().After(t.CreatedAt.Add(t.TTL)) {
			return nil, &TaskError{ServerID: c.ID(), TaskID: h.TaskID, Status: t.Status, Kind: ErrTaskExpired}
		}
		d := t.PollInterval
		if d == 0 {
			d = h.PollInterval
		}
		if d == 0 {
			d = topts.PollInterval
		}
		d = min(max(d, topts.MinPollInterval), topts.MaxPollInterval)
		select {
		case <-c.m.clock.After(d):
		case <-wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.m.ctx.Done():
			return nil, ErrClosed
		}
	}
}

// taskResult fetches a legacy task's result (tasks/result).
func (c *server) taskResult(ctx context.Context, h *TaskHandle, t *Task) (*mcp.CallToolResult, error) {
	raw, err := c.taskRequest(ctx, h, "tasks/result", &taskParams{})
	if err != nil {
		var je *jsonrpc.Error
		if errors.As(err, &je) && !isInvalidParams(err) {
			return nil, &TaskError{ServerID: c.ID(), TaskID: h.TaskID, Status: TaskFailed, Message: t.StatusMessage, Kind: ErrTaskFailed, Err: err}
		}
		if isInvalidParams(err) {
			return nil, &TaskError{ServerID: c.ID(), TaskID: h.TaskID, Status: t.Status, Kind: ErrTaskExpired, Err: err}
		}
		return nil, err
	}
	res := &mcp.CallToolResult{}
	if err := res.UnmarshalJSON(raw); err != nil {
		return nil, fmt.Errorf("tasks/result %q on server %q: %w: %w", h.TaskID, c.ID(), ErrProtocol, err)
	}
	if len(res.Content) == 0 && res.StructuredContent == nil && t.Status == TaskFailed {
		return nil, &TaskError{ServerID: c.ID(), TaskID: h.TaskID, Status: TaskFailed, Message: t.StatusMessage, Kind: ErrTaskFailed}
	}
	return res, nil
}

// answerTask answers a 2026-07-28 task's requests for input
// (tasks/update).
func (c *server) answerTask(ctx context.Context, h *TaskHandle, requests mcp.InputRequestMap) error {
	s, err := c.liveSession(ctx)
	if err != nil {
		return err
	}
	responses, err := s.hooks.fulfil(ctx, requests)
	if err != nil {
		return fmt.Errorf("task %q on server %q: %w", h.TaskID, c.ID(), err)
	}
	_, err = c.taskRequest(ctx, h, "tasks/update", &taskParams{InputResponses: responses})
	return err
}

// fulfil answers 2026-07-28 requests for input with the Manager's
// handlers, as go-sdk's multi round-trip middleware does for a call.
func (h *sessionHooks) fulfil(ctx context.Context, requests mcp.InputRequestMap) (mcp.InputResponseMap, error) {
	responses := make(mcp.InputResponseMap, len(requests))
	for id, r := range requests {
		var (
			resp mcp.InputResponse
			err  error
		)
		switch p := r.(type) {
		case *mcp.ElicitParams:
			resp, err = h.elicit(ctx, &mcp.ElicitRequest{Params: p})
		case *mcp.CreateMessageWithToolsParams:
			resp, err = h.sampleWithTools(ctx, p)
		case *mcp.ListRootsParams:
			resp = &mcp.ListRootsResult{Roots: h.c.m.currentRoots()}
		default:
			err = fmt.Errorf("%w: input request %q of type %T", ErrProtocol, id, r)
		}
		if err != nil {
			return nil, fmt.Errorf("input request %q: %w", id, err)
		}
		responses[id] = resp
	}
	return responses, nil
}

// sampleWithTools runs the sampling handler for a 2026-07-28 request for
// input, whose messages may carry any content; only single-block ones can
// reach the handler.
func (h *sessionHooks) sampleWithTools(ctx context.Context, p *mcp.CreateMessageWithToolsParams) (mcp.InputResponse, error) {
	data, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	var plain mcp.CreateMessageParams
	if err := json.Unmarshal(data, &plain); err != nil {
		return nil, fmt.Errorf("%w: a sampling request the handler cannot take: %w", ErrProtocol, err)
	}
	return h.createMessage(ctx, &mcp.CreateMessageRequest{Params: &plain})
}

// routeTaskStatus wakes the wait of the task a legacy
// notifications/tasks/status is about.
func (c *server) routeTaskStatus(params json.RawMessage) {
	var p struct {
		TaskID string `json:"taskId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	if ch, ok := c.taskWake.Load(p.TaskID); ok {
		select {
		case ch.(chan struct{}) <- struct{}{}:
		default:
		}
	}
}

// noteTasks notes, when s is installed, whether its server takes tasks.
func (c *server) noteTasks(s *session) {
	init := s.cs.InitializeResult()
	if init == nil {
		return
	}
	if init.ProtocolVersion >= protocolModern {
		if init.Capabilities != nil {
			if _, ok := init.Capabilities.Extensions[tasksExtension]; ok {
				c.tasksSeen.Store(true)
			}
		}
		return
	}
	s.tasks.mu.Lock()
	on := s.tasks.toolsCall
	s.tasks.mu.Unlock()
	if on {
		c.tasksSeen.Store(true)
	}
}

// OffersTasks reports whether a session of the server ever took tasks
// (2025-11-25 capabilities.tasks for tools/call, or the 2026-07-28
// extension): whether a call to it may run as a task. It costs an atomic
// load.
func (m *Manager) OffersTasks(serverID string) bool {
	c, err := m.lookup(serverID)
	return err == nil && c.tasksSeen.Load()
}
