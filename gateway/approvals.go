package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/policy"
	"github.com/agentmcp/agentmcp/store"
)

// Approvals through the gateway. A call the agent's policy asks about is
// stored as an approval (agent.Agent's approvals) whoever answers it: a
// person through the API, the CLI or the dashboard, and, for a client
// that declared form elicitation, the client itself, asked through an
// elicitation form (approve, or deny with a reason, optionally
// remembering the approval). The client's answer decides the stored
// approval as a person's would; a client that declines, cancels or
// cannot answer leaves it pending for a person, and the call goes on
// waiting within the client's own timeout.

// maxFormArguments bounds the arguments shown in an approval's form.
const maxFormArguments = 2000

// approvalAsker returns the agent.ApprovalAsker of a call of client c:
// an elicitation form when c takes form elicitation (a session that
// declared it, or a 2026-07-28 call whose request did, asked through
// its input-required result), no answer otherwise.
func (g *Gateway) approvalAsker(c *downstreamCall) agent.ApprovalAsker {
	return func(ctx context.Context, ap agent.Approval) (agent.ApprovalAnswer, bool) {
		if !c.canElicit("form") || g.isClosed() {
			return agent.ApprovalAnswer{}, false
		}
		res, err := g.askClient(ctx, c, approvalForm(ap))
		if err != nil || res == nil || res.Action != "accept" {
			return agent.ApprovalAnswer{}, false
		}
		decision, _ := res.Content["decision"].(string)
		switch decision {
		case "approve":
			remember, _ := res.Content["remember"].(bool)
			return agent.ApprovalAnswer{Approve: true, Remember: remember}, true
		case "deny":
			reason, _ := res.Content["reason"].(string)
			return agent.ApprovalAnswer{Reason: strings.TrimSpace(reason)}, true
		}
		return agent.ApprovalAnswer{}, false
	}
}

// approvalForm is the elicitation form that asks for an approval.
func approvalForm(ap agent.Approval) *mcp.ElicitParams {
	args := string(ap.Arguments)
	if len(args) > maxFormArguments {
		args = args[:maxFormArguments] + "…"
	}
	return &mcp.ElicitParams{
		Mode: "form",
		Message: fmt.Sprintf("The agent's policy asks for a person's approval of a call of tool %q of MCP server %q with the arguments %s (approval %s). Approve it, or deny it with a reason?",
			ap.Tool, ap.ServerID, args, ap.ID),
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"decision": map[string]any{"type": "string", "title": "Decision", "enum": []any{"approve", "deny"}},
				"remember": map[string]any{"type": "boolean", "title": "Remember",
					"description": "Allow every later call of this tool without asking", "default": false},
				"reason": map[string]any{"type": "string", "title": "Reason", "description": "Why the call is denied (the model reads it)"},
			},
			"required": []any{"decision"},
		},
	}
}

// askClient sends an elicitation to the client of call c: on its session,
// or, for a 2026-07-28 call, as the input-required result of its request.
func (g *Gateway) askClient(ctx context.Context, c *downstreamCall, params *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	if c.pending != nil {
		r, err := c.pending.ask(ctx, params)
		if err != nil {
			return nil, fmt.Errorf("asking the MCP gateway's client: %w", err)
		}
		res, ok := r.(*mcp.ElicitResult)
		if !ok {
			return nil, fmt.Errorf("the MCP gateway's client answered an elicitation with %T", r)
		}
		return res, nil
	}
	res, err := c.session.Elicit(ctx, params)
	if err != nil {
		return nil, fmt.Errorf("asking the MCP gateway's client: %w", err)
	}
	return res, nil
}

// A 2026-07-28 client that declares the tasks extension gets a call the
// stored rules ask about as a task, at once, rather than a call held
// within its timeout: its id is "{serverId}:{approvalId}", tasks/get
// shows it working (with a status message naming the approval) until the
// approval is answered and the approved call ran, then completed with
// the call's result (a tool error with the reason for a deny, an expiry,
// a refusal), and tasks/cancel of a pending one denies it. Only the user
// who made the call sees it, as for the other tasks. 2025-11-25 sessions
// have no tasks (go-sdk's server has none): their calls are held.

// approvalIDPrefix starts the id of every approval (agent.Approval.ID).
const approvalIDPrefix = "ap_"

// mayAsk reports whether the agent's stored policy may ask about a call
// (its default or one of its rules says ask): the gateway then offers the
// tasks extension, for its clients to get such calls as tasks.
func (g *Gateway) mayAsk() bool {
	p := g.a.Policy()
	if p.Default == policy.Ask {
		return true
	}
	for _, r := range p.Rules {
		if r.Action == policy.Ask {
			return true
		}
	}
	return false
}

// asksAbout reports whether the agent's stored rules ask about a call of
// tool name of serverID by the gateway.
func (g *Gateway) asksAbout(serverID, name string) bool {
	return g.a.Decide(serverID, name, policy.Gateway).Action == policy.Ask
}

// approvalTask answers a tools/call of a client that declares tasks with
// the task of approval ap.
func approvalTask(w http.ResponseWriter, id any, ap agent.Approval) {
	wt := wireApproval(ap, false)
	wt["resultType"] = "task"
	writeTaskResponse(w, id, wt, nil)
}

// serveApprovalTask answers tasks/get, tasks/cancel and tasks/update of
// a task that is an approval.
func (g *Gateway) serveApprovalTask(w http.ResponseWriter, r *http.Request, id any, method, taskID, serverID, approvalID string) {
	ap, err := g.a.Approval(r.Context(), approvalID)
	switch {
	case errors.Is(err, agent.ErrUnknownApproval) || (err == nil && (ap.ServerID != serverID ||
		ap.Caller != policy.Gateway || ap.Correlation() != taskOwner(r.Context()) || !g.exposed(ap.ServerID, ap.Tool))):
		writeTaskResponse(w, id, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown task " + taskID})
		return
	case err != nil:
		writeTaskResponse(w, id, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "reading task " + taskID + ": " + err.Error()})
		return
	}
	switch method {
	case "tasks/update":
		writeTaskResponse(w, id, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "task " + taskID + " waits for no input from the client"})
	case "tasks/cancel":
		if ap.State != store.ApprovalPending {
			writeTaskResponse(w, id, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "task " + taskID + " is " + wireApproval(ap, false)["status"].(string) + ": its approval was answered"})
			return
		}
		if _, err := g.a.Deny(withDecider(r.Context(), subjectOf(r.Context())), ap.ID, "cancelled by the MCP client"); err != nil {
			writeTaskResponse(w, id, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("cancelling task %s: %v", taskID, err)})
			return
		}
		writeTaskResponse(w, id, map[string]any{}, nil)
	default:
		writeTaskResponse(w, id, wireApproval(ap, true), nil)
	}
}

// wireApproval is an approval as the tasks extension sends a task:
// working while it waits for its answer or its call runs, then completed
// (detailed adds the result: the call's, or a tool error saying why it
// did not run).
func wireApproval(ap agent.Approval, detailed bool) map[string]any {
	updated := ap.DecidedAt
	if updated.IsZero() {
		updated = ap.RequestedAt
	}
	w := map[string]any{
		"taskId": taskID(ap.ServerID, ap.ID), "status": "working",
		"createdAt": ap.RequestedAt.UTC().Format(time.RFC3339Nano), "lastUpdatedAt": updated.UTC().Format(time.RFC3339Nano),
		"pollIntervalMs": taskPollInterval.Milliseconds(),
	}
	var res *mcp.CallToolResult
	switch ap.State {
	case store.ApprovalPending:
		w["statusMessage"] = fmt.Sprintf("waiting for a person's approval %s, until %s", ap.ID, ap.ExpiresAt.UTC().Format(time.RFC3339))
		return w
	case store.ApprovalApproved:
		w["statusMessage"] = "approved; the call runs"
		return w
	case store.ApprovalDenied:
		res = toolError((&agent.ApprovalDeniedError{Approval: ap}).Error())
	case store.ApprovalExpired:
		res = toolError(fmt.Sprintf("the call of tool %q of MCP server %q was not approved by %s", ap.Tool, ap.ServerID, ap.ExpiresAt.UTC().Format(time.RFC3339)))
	default: // done
		res = ownResult(ap.Result)
		if res == nil {
			res = toolError(fmt.Sprintf("calling tool %q on MCP server %q failed: %s", ap.Tool, ap.ServerID, ap.Error))
		}
	}
	w["status"] = "completed"
	if detailed {
		w["result"] = res
	}
	return w
}
