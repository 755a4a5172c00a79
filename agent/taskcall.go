package agent

import (
	"context"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/mcpclient"
)

// TaskCall is a tool call made for a request (an API request, an MCP
// client's call through a gateway) that may become an MCP task. Until the
// server creates a task, the call is the request's: Release cancels it.
// Once it is a task, it is the agent's: the call goes on waiting for the
// task past the request's end, and the agent stores its outcome (Task,
// TaskResult), until the task ends or the agent closes (the task is then
// resumed from the store when the agent opens again).
type TaskCall struct {
	done    chan struct{} // closed once res and err are set
	started chan struct{} // closed once the server created the task
	res     *mcp.CallToolResult
	err     error
	cancel  context.CancelCauseFunc

	// unhold ends the call's hold on the agent (Hold): at its end, or
	// once it is a task that outlives its request (the task is resumed
	// from the store if the agent closes first, so it does not keep the
	// agent awake, nor a process that stops waiting for it).
	unhold func()

	// mu guards handle and released.
	mu       sync.Mutex
	handle   *mcpclient.TaskHandle
	released bool
}

// StartTaskCall starts a call of tool name on server serverID, as CallTool
// does, bounded by ctx until it becomes a task (see TaskCall). ctx's
// values (its trace, a correlation from WithTaskCorrelation) go with the
// call. opts.TaskStarted, if set, is called as the task starts.
func (a *Agent) StartTaskCall(ctx context.Context, serverID, name string, args any, opts *mcpclient.CallOptions) *TaskCall {
	var o mcpclient.CallOptions
	if opts != nil {
		o = *opts
	}
	c := &TaskCall{done: make(chan struct{}), started: make(chan struct{}), unhold: a.Hold()}
	cctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	c.cancel = cancel
	stop := context.AfterFunc(ctx, func() { c.Release(context.Cause(ctx)) })
	started := o.TaskStarted
	o.TaskStarted = func(h *mcpclient.TaskHandle) {
		c.mu.Lock()
		if !c.released {
			c.handle = h
			close(c.started)
		}
		c.mu.Unlock()
		if started != nil {
			started(h)
		}
	}
	// The call may outlive its request: Close waits for it (under
	// tasks.mu, as for resumed polls: none starts once Close began).
	a.tasks.mu.Lock()
	if a.tasks.ctx.Err() != nil {
		a.tasks.mu.Unlock()
		stop()
		cancel(nil)
		c.unhold()
		c.err = fmt.Errorf("tools/call %q on server %q: %w", name, serverID, mcpclient.ErrClosed)
		close(c.done)
		return c
	}
	a.tasks.wg.Add(1)
	a.tasks.mu.Unlock()
	go func() {
		defer a.tasks.wg.Done()
		defer cancel(nil)
		defer c.unhold()
		c.res, c.err = a.policedCall(cctx, serverID, name, args, &o) // the hold is c's
		stop()
		close(c.done)
	}()
	return c
}

// OffersTasks reports whether a session of server serverID ever took
// tasks (mcpclient.Manager.OffersTasks): whether a call to it may become
// one.
func (a *Agent) OffersTasks(serverID string) bool { return a.m.OffersTasks(serverID) }

// Done is closed when the call ended: Result returns its outcome.
func (c *TaskCall) Done() <-chan struct{} { return c.done }

// Result returns the call's outcome, once Done is closed.
func (c *TaskCall) Result() (*mcp.CallToolResult, error) {
	<-c.done
	return c.res, c.err
}

// Started is closed once the server created the call's task (before the
// request's end): Task returns it.
func (c *TaskCall) Started() <-chan struct{} { return c.started }

// Task returns the handle of the call's task, or nil when the call is not
// one (yet, or ever).
func (c *TaskCall) Task() *mcpclient.TaskHandle {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.handle
}

// Release says that the request is over (its context's end does too): a
// call that is a task goes on, and its handle is returned; any other is
// cancelled with cause, and Release returns nil.
func (c *TaskCall) Release(cause error) *mcpclient.TaskHandle {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.handle != nil:
		c.unhold()
	case !c.released:
		c.released = true
		c.cancel(cause)
	}
	return c.handle
}
