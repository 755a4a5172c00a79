package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/policy"
	"github.com/agentmcp/agentmcp/server/internal/failure"
)

// The agent's tool policy and its approvals (agent.Agent.SetPolicy,
// Approvals, Approve, Deny).
const (
	policyRoute    = "/agents/{class}/{name}/policy"
	approvalsRoute = "/agents/{class}/{name}/approvals"
	approvalRoute  = "/agents/{class}/{name}/approvals/{approval}"
)

// policyRoutes adds GET and PUT .../policy, GET .../approvals, and GET and
// POST .../approvals/{approval}.
func (s *Server) policyRoutes(mux *http.ServeMux) {
	mux.Handle(policyRoute, s.agentRoute(methods{http.MethodGet: handle(s, getPolicy), http.MethodPut: handle(s, s.putPolicy)}))
	mux.Handle(approvalsRoute, s.agentRoute(methods{http.MethodGet: handle(s, s.listApprovals)}))
	mux.Handle(approvalRoute, s.agentRoute(methods{http.MethodGet: handle(s, s.getApproval), http.MethodPost: handle(s, s.answerApproval)}))
}

func getPolicy(r *http.Request, a *agent.Agent, _ *noBody) (policy.Policy, error) {
	return a.Policy(), nil
}

// putPolicy replaces the policy: 200 with the policy now in force, 400
// invalid_request naming the first bad rule and why.
func (s *Server) putPolicy(r *http.Request, a *agent.Agent, req *api.Policy) (policy.Policy, error) {
	doc, err := json.Marshal(req)
	if err != nil {
		return policy.Policy{}, apiErrorf(http.StatusBadRequest, api.CodeInvalidRequest, "%v", err)
	}
	p, err := policy.Parse(doc)
	if err == nil {
		err = a.SetPolicy(r.Context(), p)
	}
	switch {
	case errors.Is(err, policy.ErrInvalid):
		return policy.Policy{}, apiErrorf(http.StatusBadRequest, api.CodeInvalidRequest, "%v", err)
	case errors.Is(err, agent.ErrPolicyUnsupported):
		return policy.Policy{}, apiErrorf(http.StatusNotImplemented, api.CodeInternal, "this server's store cannot keep a tool policy")
	case err != nil:
		s.logger.Warn("cannot store a tool policy", "agent", a.Namespace(), "error", err)
		return policy.Policy{}, apiErrorf(http.StatusServiceUnavailable, api.CodeUnavailable, "the policy could not be stored; retry")
	}
	return a.Policy(), nil
}

func (s *Server) listApprovals(r *http.Request, a *agent.Agent, _ *noBody) (api.ApprovalsResponse, error) {
	list, err := a.Approvals(r.Context())
	out := api.ApprovalsResponse{Approvals: make([]api.Approval, 0, len(list))}
	for _, ap := range list {
		out.Approvals = append(out.Approvals, ap.API())
	}
	return out, s.approvalError(a, err)
}

func (s *Server) getApproval(r *http.Request, a *agent.Agent, _ *noBody) (api.ApprovalResponse, error) {
	ap, err := a.Approval(r.Context(), r.PathValue("approval"))
	return api.ApprovalResponse{Approval: ap.API()}, s.approvalError(a, err)
}

// answerApproval approves or denies: 200 with the approval as it is now
// (an approved call runs in the background; GET the approval for its
// result).
func (s *Server) answerApproval(r *http.Request, a *agent.Agent, req *api.AnswerApprovalRequest) (api.ApprovalResponse, error) {
	id := r.PathValue("approval")
	var (
		ap  agent.Approval
		err error
	)
	if err := agent.CheckDecider(req.By); err != nil {
		return api.ApprovalResponse{}, apiErrorf(http.StatusBadRequest, api.CodeInvalidRequest, "by: %s", strings.TrimPrefix(err.Error(), agent.ErrInvalidDecider.Error()+": "))
	}
	ctx := agent.WithDecider(r.Context(), req.By) // a label the request states
	switch req.Decision {
	case "approve":
		if req.Reason != "" {
			return api.ApprovalResponse{}, apiErrorf(http.StatusBadRequest, api.CodeInvalidRequest, "reason goes with deny")
		}
		ap, err = a.Approve(ctx, id, req.Remember)
	case "deny":
		if req.Remember {
			return api.ApprovalResponse{}, apiErrorf(http.StatusBadRequest, api.CodeInvalidRequest, "remember goes with approve")
		}
		ap, err = a.Deny(ctx, id, req.Reason)
	default:
		return api.ApprovalResponse{}, apiErrorf(http.StatusBadRequest, api.CodeInvalidRequest, `decision must be "approve" or "deny"`)
	}
	return api.ApprovalResponse{Approval: ap.API()}, s.approvalError(a, err)
}

// approvalError maps the errors of the approvals' routes (nil for none).
func (s *Server) approvalError(a *agent.Agent, err error) error {
	if err == nil {
		return nil
	}
	if aerr := failure.Policy(err); aerr != nil {
		return aerr
	}
	switch {
	case errors.Is(err, agent.ErrApprovalsUnsupported):
		return apiErrorf(http.StatusNotImplemented, api.CodeInternal, "this server's store cannot keep approvals")
	case errors.Is(err, agent.ErrApprovalAnswered):
		return apiErrorf(http.StatusConflict, api.CodeApprovalAnswered, "%v", err)
	}
	s.logger.Warn("approvals: the store failed", "agent", a.Namespace(), "error", err)
	return apiErrorf(http.StatusServiceUnavailable, api.CodeUnavailable, "the approvals could not be read or written; retry")
}

// policyRefused answers 403 tool_denied, before the catalog check, for a
// call of a tool the policy denies to the API (which ListTools leaves
// out, so that it would otherwise be an unknown tool). It reports whether
// it answered.
func policyRefused(w http.ResponseWriter, r *http.Request, a *agent.Agent, serverID, tool string, args json.RawMessage) bool {
	d := a.Decide(serverID, tool, policy.API)
	if d.Action != policy.Deny {
		return false
	}
	a.AuditRefused(r.Context(), serverID, tool, args, agent.DeniedError(serverID, tool, policy.API, d))
	aerr := apiErrorf(http.StatusForbidden, api.CodeToolDenied, "tool %q of MCP server %s is denied by the agent's policy", tool, failure.Label(a, serverID))
	aerr.ServerID = serverID
	writeError(w, aerr)
	return true
}

// pendingError is the error of a call still waiting for approval where
// no 202 can be answered (a streamed call's error event), nil for any
// other error.
func pendingError(err error) *api.APIError {
	var pending *agent.ApprovalPendingError
	if !errors.As(err, &pending) {
		return nil
	}
	e := apiErrorf(http.StatusAccepted, api.CodeApprovalPending, "%v", err)
	e.ServerID = pending.Approval.ServerID
	return e
}

// approvalAccepted answers 202 {"approval": {...}} for a call that still
// waits for approval when its time ran out. It reports whether it
// answered.
func approvalAccepted(w http.ResponseWriter, err error) bool {
	var pending *agent.ApprovalPendingError
	if !errors.As(err, &pending) {
		return false
	}
	writeJSON(w, http.StatusAccepted, api.ApprovalResponse{Approval: pending.Approval.API()})
	return true
}
