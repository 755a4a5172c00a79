package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"time"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/internal/sse"
)

// timeoutMS is the time left before ctx's deadline, in milliseconds
// (rounded up, at most api.MaxCallTimeout), or 0 when ctx has none: the server
// then gives up on a call when its client does.
func timeoutMS(ctx context.Context) int64 {
	deadline, ok := ctx.Deadline()
	if !ok {
		return 0
	}
	return max(1, min(time.Until(deadline).Milliseconds()+1, api.MaxCallTimeout.Milliseconds()))
}

// CallTool calls a tool and returns its MCP CallToolResult as the server
// sent it, JSON to decode into the MCP types of the caller's choice
// (go-sdk's mcp.CallToolResult, say). A tool failure is a result with
// isError set. The server bounds the call by ctx's deadline (timeoutMs),
// else by its default (server.Options.CallTimeout); cancelling ctx cancels
// the call on the MCP server. A call that the server runs as an MCP task
// is the agent's once the task exists: when ctx's deadline passes first,
// the call returns a *TaskRunningError naming the task, which runs on
// (Task fetches it, CancelTask cancels it). A call the agent's policy asks
// a person about that is still unanswered when the time runs out returns
// an *ApprovalPendingError (Approval fetches it later, with the call's
// result once approved).
func (c *Client) CallTool(ctx context.Context, serverID, name string, args any) (json.RawMessage, error) {
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	var res json.RawMessage
	status, err := c.doStatus(ctx, http.MethodPost, "/servers/"+url.PathEscape(serverID)+"/tools/call", api.CallToolRequest{Name: name, Arguments: raw, TimeoutMS: timeoutMS(ctx)}, &res)
	if err != nil {
		return nil, err
	}
	if status == http.StatusAccepted {
		// 202: the call waits for a person's approval ({"approval": ...}),
		// or runs on as a task (the task).
		var waiting api.ApprovalResponse
		if err := json.Unmarshal(res, &waiting); err == nil && waiting.Approval.ID != "" {
			return nil, &ApprovalPendingError{Approval: waiting.Approval}
		}
		e := &TaskRunningError{}
		if err := json.Unmarshal(res, &e.Task); err != nil {
			return nil, fmt.Errorf("server client: decoding the task of tools/call %q: %w", name, err)
		}
		return nil, e
	}
	return res, nil
}

// ReadResource reads a resource, bounded as CallTool, and returns its MCP
// ReadResourceResult as JSON.
func (c *Client) ReadResource(ctx context.Context, serverID, uri string) (json.RawMessage, error) {
	var res json.RawMessage
	if err := c.do(ctx, http.MethodPost, "/servers/"+url.PathEscape(serverID)+"/resources/read", api.ReadResourceRequest{URI: uri, TimeoutMS: timeoutMS(ctx)}, &res); err != nil {
		return nil, err
	}
	return res, nil
}

// GetPrompt gets a prompt, bounded as CallTool, and returns its MCP
// GetPromptResult as JSON.
func (c *Client) GetPrompt(ctx context.Context, serverID, name string, args map[string]string) (json.RawMessage, error) {
	var res json.RawMessage
	if err := c.do(ctx, http.MethodPost, "/servers/"+url.PathEscape(serverID)+"/prompts/get", api.GetPromptRequest{Name: name, Arguments: args, TimeoutMS: timeoutMS(ctx)}, &res); err != nil {
		return nil, err
	}
	return res, nil
}

// CallWatch receives the events of a call made with CallToolWatched. Its
// functions (each may be nil) are called in order on the goroutine of
// CallToolWatched, and must not block: a question to ask the user is asked
// on a goroutine of the caller's, and answered with AnswerElicitation.
type CallWatch struct {
	// Started receives the call's id (the CallID of its elicitations).
	Started func(callID string)
	// Progress receives the server's progress notifications.
	Progress func(Progress)
	// Elicitation receives a request for the user's input of the call's
	// server, pending until answered (AnswerElicitation, here or on the
	// dashboard) or given up.
	Elicitation func(api.Elicitation)
	// ElicitationEnded says that request id no longer waits.
	ElicitationEnded func(id string)
	// Task receives the call's task, when the server runs the call as one;
	// its status messages then come as Progress.
	Task func(api.Task)
}

// Progress is a progress notification of a call's server.
type Progress struct {
	// Progress is how far the call is, and Total where it ends (zero when
	// the server gave none).
	Progress, Total float64
	// Message says what the call does now, sanitised; empty for none.
	Message string
}

// maxCallEvent bounds one event of a streamed call (its result included).
const maxCallEvent = 64 << 20

// CallToolWatched is CallTool, with the call's events streamed to w as
// they happen (Accept: text/event-stream): its progress, and the requests
// for input its server makes, which the caller may answer. The result and
// errors are those of CallTool (a *TaskRunningError too).
func (c *Client) CallToolWatched(ctx context.Context, serverID, name string, args any, w *CallWatch) (json.RawMessage, error) {
	if w == nil {
		w = &CallWatch{}
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(api.CallToolRequest{Name: name, Arguments: raw, TimeoutMS: timeoutMS(ctx)})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/servers/"+url.PathEscape(serverID)+"/tools/call", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	res, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); res.StatusCode >= 300 || mt != "text/event-stream" {
		return nil, decodeAnswer(res, nil)
	}
	rd := sse.NewLongReader(res.Body, maxCallEvent)
	defer rd.Release()
	for {
		e, err := rd.Next()
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, fmt.Errorf("server client: reading the events of tools/call %q: %w", name, err)
		}
		var ev api.CallEvent
		if err := json.Unmarshal(e.Data, &ev); err != nil {
			return nil, fmt.Errorf("server client: decoding an event of tools/call %q: %w", name, err)
		}
		switch ev.Type {
		case api.CallEventStart:
			if w.Started != nil {
				w.Started(ev.CallID)
			}
		case api.CallEventProgress:
			if w.Progress != nil {
				w.Progress(Progress{Progress: ev.Progress, Total: ev.Total, Message: ev.Message})
			}
		case api.CallEventElicitation:
			if w.Elicitation != nil && ev.Elicitation != nil {
				w.Elicitation(*ev.Elicitation)
			}
		case api.CallEventElicitationEnded:
			if w.ElicitationEnded != nil {
				w.ElicitationEnded(ev.ID)
			}
		case api.CallEventTask:
			if w.Task != nil && ev.Task != nil {
				w.Task(*ev.Task)
			}
		case api.CallEventTaskRunning:
			if ev.Task == nil {
				return nil, fmt.Errorf("server client: tools/call %q: a task_running event without a task", name)
			}
			return nil, &TaskRunningError{Task: *ev.Task}
		case api.CallEventResult:
			if ev.Result == nil {
				return nil, fmt.Errorf("server client: tools/call %q: a result event without a result", name)
			}
			return ev.Result, nil
		case api.CallEventError:
			if ev.Error == nil {
				return nil, fmt.Errorf("server client: tools/call %q: an error event without an error", name)
			}
			ev.Error.Status = ev.Status
			return nil, ev.Error
		}
	}
}
