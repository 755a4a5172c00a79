package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/agentmcp/agentmcp/api"
)

// Policy returns the agent's tool policy (GET .../policy).
func (c *Client) Policy(ctx context.Context) (api.Policy, error) {
	var out api.Policy
	err := c.do(ctx, http.MethodGet, "/policy", nil, &out)
	return out, err
}

// SetPolicy replaces the agent's tool policy (PUT .../policy) and returns
// the policy now in force.
func (c *Client) SetPolicy(ctx context.Context, p api.Policy) (api.Policy, error) {
	if p.Rules == nil {
		p.Rules = []api.PolicyRule{}
	}
	var out api.Policy
	err := c.do(ctx, http.MethodPut, "/policy", p, &out)
	return out, err
}

// Approvals lists the agent's approvals (GET .../approvals): pending ones
// first, then the others, most recent first.
func (c *Client) Approvals(ctx context.Context) ([]api.Approval, error) {
	var out api.ApprovalsResponse
	err := c.do(ctx, http.MethodGet, "/approvals", nil, &out)
	return out.Approvals, err
}

// Approval returns one approval (GET .../approvals/{id}).
func (c *Client) Approval(ctx context.Context, id string) (api.Approval, error) {
	var out api.ApprovalResponse
	err := c.do(ctx, http.MethodGet, "/approvals/"+url.PathEscape(id), nil, &out)
	return out.Approval, err
}

// AnswerApproval approves or denies an approval (POST
// .../approvals/{id}) and returns it as it is now.
func (c *Client) AnswerApproval(ctx context.Context, id string, req api.AnswerApprovalRequest) (api.Approval, error) {
	var out api.ApprovalResponse
	err := c.do(ctx, http.MethodPost, "/approvals/"+url.PathEscape(id), req, &out)
	return out.Approval, err
}

// ApprovalPendingError is the error of CallTool when the agent's policy
// asks a person about the call and nobody answered within the call's time
// (202 Accepted): the approval stays pending, and once approved the call
// runs once, its result stored with the approval (Approval fetches it).
type ApprovalPendingError struct {
	Approval api.Approval
}

func (e *ApprovalPendingError) Error() string {
	return fmt.Sprintf("tools/call %q on server %q waits for approval %s (until %s)", e.Approval.Tool, e.Approval.Server, e.Approval.ID, e.Approval.ExpiresAt.Format(time.RFC3339))
}
