package gateway

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/agent"
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
