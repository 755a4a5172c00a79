package mcpclient

import (
	"context"
	"fmt"

	"github.com/agentmcp/agentmcp/mcpclient/transport"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CallOptions configures one call.
type CallOptions struct {
	// Progress, if set, receives the server's progress notifications for
	// this call, in order, before the call returns. It is called on the
	// connection's reading goroutine and must not block.
	Progress func(*mcp.ProgressNotificationParams)

	// Task asks for the call to run as a task when the tool allows it
	// (2025-11-25 taskSupport "optional"); Options.Tasks.Prefer asks it
	// for every call. A tool whose taskSupport is "required", and any call
	// to a 2026-07-28 server that offers the tasks extension, goes as a
	// task where the server decides, whatever this says.
	Task bool

	// TaskStarted, if set, is called once the server has created the
	// call's task, before it is first polled: where a caller keeps the
	// handle to resume the wait after a restart (Manager.WaitTask).
	TaskStarted func(*TaskHandle)

	// TaskStatus, if set, is called with the task's state each time its
	// status or status message changes. Progress hears of the same
	// changes, as progress notifications whose message is the status
	// message.
	TaskStatus func(*Task)
}

// CallTool calls a tool on a server. Cancelling ctx cancels the request on
// the server.
//
// A tool failure is a result with IsError set, not an error; an error means
// the call did not complete. If the session expires during the call, it is
// re-initialised once and the call repeated when the tool is annotated
// readOnlyHint or idempotentHint; otherwise the error is an
// [*InterruptedCallError].
func (m *Manager) CallTool(ctx context.Context, serverID, name string, args any, opts *CallOptions) (*mcp.CallToolResult, error) {
	c, err := m.lookup(serverID)
	if err != nil {
		return nil, err
	}
	if c.tasksSeen.Load() || (opts != nil && opts.Task) {
		if res, err, handled := c.callAsTask(ctx, name, args, opts); handled {
			return res, err
		}
	}
	tool := c.tool(name)
	repeatable := tool != nil && tool.Annotations != nil &&
		(tool.Annotations.ReadOnlyHint || tool.Annotations.IdempotentHint)
	call := &transport.Call{Name: name, Tool: tool, SplitText: true}
	ctx = transport.WithCall(ctx, call)
	if m, ok := args.(map[string]any); args == nil || (ok && m == nil) {
		args = map[string]any{} // never "arguments": null
	}
	res, err := doCall(ctx, c, "tools/call", name, repeatable, opts, func(ctx context.Context, s *session, meta mcp.Meta) (*mcp.CallToolResult, error) {
		res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Meta: meta, Name: name, Arguments: args})
		if err == nil {
			// Text items the transport decoded, when the call went through
			// go-sdk (directMiddleware decodes a result whole).
			call.FillContent(res)
		}
		return res, err
	})
	if err != nil {
		return res, err
	}
	if tool == nil {
		tool = c.tool(name) // a stale catalog may have been replaced meanwhile
	}
	if err := c.checkOutput(tool, res); err != nil {
		return nil, err
	}
	return res, nil
}

// ReadResource reads a resource from a server. It is repeated once after a
// session expiry.
func (m *Manager) ReadResource(ctx context.Context, serverID, uri string) (*mcp.ReadResourceResult, error) {
	c, err := m.lookup(serverID)
	if err != nil {
		return nil, err
	}
	ctx = transport.WithCall(ctx, &transport.Call{Name: uri})
	return doCall(ctx, c, "resources/read", uri, true, nil, func(ctx context.Context, s *session, meta mcp.Meta) (*mcp.ReadResourceResult, error) {
		return s.cs.ReadResource(ctx, &mcp.ReadResourceParams{Meta: meta, URI: uri})
	})
}

// GetPrompt gets a prompt from a server. It is repeated once after a
// session expiry.
func (m *Manager) GetPrompt(ctx context.Context, serverID, name string, args map[string]string) (*mcp.GetPromptResult, error) {
	c, err := m.lookup(serverID)
	if err != nil {
		return nil, err
	}
	ctx = transport.WithCall(ctx, &transport.Call{Name: name})
	return doCall(ctx, c, "prompts/get", name, true, nil, func(ctx context.Context, s *session, meta mcp.Meta) (*mcp.GetPromptResult, error) {
		return s.cs.GetPrompt(ctx, &mcp.GetPromptParams{Meta: meta, Name: name, Arguments: args})
	})
}

// doCall runs fn on the server's session. When the session turns out to be
// lost, it renews the session once and repeats fn if repeatable.
func doCall[T any](ctx context.Context, c *server, method, name string, repeatable bool, opts *CallOptions,
	fn func(context.Context, *session, mcp.Meta) (T, error)) (T, error) {
	var zero T
	var meta mcp.Meta
	if opts != nil && opts.Progress != nil {
		token := fmt.Sprintf("agentmcp-%d", c.m.progressSeq.Add(1))
		c.progress.Store(token, opts.Progress)
		defer c.progress.Delete(token)
		meta = mcp.Meta{"progressToken": token}
	}
	s, err := c.liveSession(ctx)
	if err != nil {
		return zero, err
	}
	res, err := fn(ctx, s, meta)
	if err == nil || ctx.Err() != nil {
		return res, err
	}
	if IsUnauthorized(err) && c.opts.Auth != nil {
		authURL, aerr := c.authorize(ctx, err)
		switch {
		case aerr != nil:
			return zero, fmt.Errorf("%s %q on server %q: %w (%w)", method, name, c.ID(), err, aerr)
		case authURL == "":
			// New credentials without a user: once more.
			res, err = fn(ctx, s, meta)
			if err == nil {
				return res, nil
			}
			if !IsUnauthorized(err) {
				return zero, fmt.Errorf("%s %q on server %q: %w", method, name, c.ID(), err)
			}
			if authURL, aerr = c.authorize(ctx, err); aerr != nil || authURL == "" {
				return zero, fmt.Errorf("%s %q on server %q: %w", method, name, c.ID(), err)
			}
		}
		c.setAuthenticating(authURL, err)
		return zero, &AuthRequiredError{ServerID: c.ID(), AuthURL: authURL, Err: err}
	}
	if !isSessionLost(err) {
		c.noteCallError(s, err)
		return zero, fmt.Errorf("%s %q on server %q: %w", method, name, c.ID(), err)
	}
	op := c.startRenew(s, 1)
	select {
	case <-op.done:
	case <-ctx.Done():
		return zero, ctx.Err()
	}
	if op.err != nil {
		return zero, fmt.Errorf("%s %q on server %q: %w; reconnecting failed: %w", method, name, c.ID(), err, op.err)
	}
	if !repeatable {
		return zero, &InterruptedCallError{ServerID: c.ID(), Method: method, Name: name, Err: err}
	}
	if s, err = c.liveSession(ctx); err != nil {
		return zero, err
	}
	res, err = fn(ctx, s, meta)
	if err != nil {
		return zero, fmt.Errorf("%s %q on server %q: %w", method, name, c.ID(), err)
	}
	return res, nil
}
