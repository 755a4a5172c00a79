package client

import (
	"context"
	"net/http"
	"net/url"

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
