package server

import (
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"time"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/policy"
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
	mux.Handle(policyRoute, s.agentRoute(methods{http.MethodGet: s.getPolicy, http.MethodPut: s.putPolicy}))
	mux.Handle(approvalsRoute, s.agentRoute(methods{http.MethodGet: s.listApprovals}))
	mux.Handle(approvalRoute, s.agentRoute(methods{http.MethodGet: s.getApproval, http.MethodPost: s.answerApproval}))
}

func (s *Server) getPolicy(w http.ResponseWriter, r *http.Request, a *agent.Agent) {
	writeJSON(w, http.StatusOK, a.Policy())
}

// putPolicy replaces the policy: 200 with the policy now in force, 400
// invalid_request naming the first bad rule and why.
func (s *Server) putPolicy(w http.ResponseWriter, r *http.Request, a *agent.Agent) {
	var req api.Policy
	if aerr := decodeBody(w, r, &req); aerr != nil {
		writeError(w, aerr)
		return
	}
	doc, err := json.Marshal(req)
	if err != nil {
		writeError(w, apiErrorf(http.StatusBadRequest, api.CodeInvalidRequest, "%v", err))
		return
	}
	p, err := policy.Parse(doc)
	if err == nil {
		err = a.SetPolicy(r.Context(), p)
	}
	switch {
	case errors.Is(err, policy.ErrInvalid):
		writeError(w, apiErrorf(http.StatusBadRequest, api.CodeInvalidRequest, "%v", err))
		return
	case errors.Is(err, agent.ErrPolicyUnsupported):
		writeError(w, apiErrorf(http.StatusNotImplemented, api.CodeInternal, "this server's store cannot keep a tool policy"))
		return
	case err != nil:
		s.logger.Warn("cannot store a tool policy", "agent", a.Namespace(), "error", err)
		writeError(w, apiErrorf(http.StatusServiceUnavailable, api.CodeUnavailable, "the policy could not be stored; retry"))
		return
	}
	s.getPolicy(w, r, a)
}

func (s *Server) listApprovals(w http.ResponseWriter, r *http.Request, a *agent.Agent) {
	list, err := a.Approvals(r.Context())
	if err != nil {
		writeError(w, s.approvalError(a, err))
		return
	}
	out := api.ApprovalsResponse{Approvals: make([]api.Approval, 0, len(list))}
	for _, ap := range list {
		out.Approvals = append(out.Approvals, wireApproval(ap))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) getApproval(w http.ResponseWriter, r *http.Request, a *agent.Agent) {
	ap, err := a.Approval(r.Context(), r.PathValue("approval"))
	if err != nil {
		writeError(w, s.approvalError(a, err))
		return
	}
	writeJSON(w, http.StatusOK, api.ApprovalResponse{Approval: wireApproval(ap)})
}

// answerApproval approves or denies: 200 with the approval as it is now
// (an approved call runs in the background; GET the approval for its
// result).
func (s *Server) answerApproval(w http.ResponseWriter, r *http.Request, a *agent.Agent) {
	var req api.AnswerApprovalRequest
	if aerr := decodeBody(w, r, &req); aerr != nil {
		writeError(w, aerr)
		return
	}
	id := r.PathValue("approval")
	var (
		ap  agent.Approval
		err error
	)
	switch req.Decision {
	case "approve":
		if req.Reason != "" {
			writeError(w, apiErrorf(http.StatusBadRequest, api.CodeInvalidRequest, "reason goes with deny"))
			return
		}
		ap, err = a.Approve(r.Context(), id, req.Remember)
	case "deny":
		if req.Remember {
			writeError(w, apiErrorf(http.StatusBadRequest, api.CodeInvalidRequest, "remember goes with approve"))
			return
		}
		ap, err = a.Deny(r.Context(), id, req.Reason)
	default:
		writeError(w, apiErrorf(http.StatusBadRequest, api.CodeInvalidRequest, `decision must be "approve" or "deny"`))
		return
	}
	if err != nil {
		writeError(w, s.approvalError(a, err))
		return
	}
	writeJSON(w, http.StatusOK, api.ApprovalResponse{Approval: wireApproval(ap)})
}

// approvalError maps the errors of the approvals' routes.
func (s *Server) approvalError(a *agent.Agent, err error) *api.APIError {
	if aerr := policyError(err); aerr != nil {
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

// policyError maps the errors of a call the policy refused or a person
// answered, nil for any other.
func policyError(err error) *api.APIError {
	var (
		limited *agent.RateLimitedError
		denied  *agent.ApprovalDeniedError
	)
	switch {
	case err == nil:
		return nil
	case errors.As(err, &limited):
		e := apiErrorf(http.StatusTooManyRequests, api.CodeRateLimited, "%v", err)
		e.RetryAfter = int(math.Ceil(limited.Wait.Seconds()))
		e.ServerID = limited.ServerID
		return e
	case errors.Is(err, agent.ErrToolDenied):
		return apiErrorf(http.StatusForbidden, api.CodeToolDenied, "%v", err)
	case errors.Is(err, agent.ErrToolChanged): // pins.go
		return apiErrorf(http.StatusConflict, api.CodeToolChanged, "%v", err)
	case errors.As(err, &denied):
		return apiErrorf(http.StatusForbidden, api.CodeApprovalDenied, "%v", err)
	case errors.Is(err, agent.ErrApprovalExpired):
		return apiErrorf(http.StatusConflict, api.CodeApprovalExpired, "%v", err)
	case errors.Is(err, agent.ErrApprovalMismatch):
		return apiErrorf(http.StatusConflict, api.CodeApprovalMismatch, "%v", err)
	case errors.Is(err, agent.ErrUnknownApproval):
		return apiErrorf(http.StatusNotFound, api.CodeUnknownApproval, "%v", err)
	}
	return nil
}

// policyRefused answers 403 tool_denied, before the catalog check, for a
// call of a tool the policy denies to the API (which ListTools leaves
// out, so that it would otherwise be an unknown tool). It reports whether
// it answered.
func policyRefused(w http.ResponseWriter, a *agent.Agent, serverID, tool string) bool {
	d := a.Decide(serverID, tool, policy.API)
	if d.Action != policy.Deny {
		return false
	}
	aerr := apiErrorf(http.StatusForbidden, api.CodeToolDenied, "tool %q of MCP server %s is denied by the agent's policy", tool, serverLabel(a, serverID))
	aerr.ServerID = serverID
	writeError(w, aerr)
	return true
}

// approvalAccepted answers 202 {"approval": {...}} for a call that still
// waits for approval when its time ran out. It reports whether it
// answered.
func approvalAccepted(w http.ResponseWriter, err error) bool {
	var pending *agent.ApprovalPendingError
	if !errors.As(err, &pending) {
		return false
	}
	writeJSON(w, http.StatusAccepted, api.ApprovalResponse{Approval: wireApproval(pending.Approval)})
	return true
}

// wireApproval is an approval on the wire.
func wireApproval(ap agent.Approval) api.Approval {
	out := api.Approval{ID: ap.ID, Server: ap.ServerID, Tool: ap.Tool, Arguments: ap.Arguments, Caller: string(ap.Caller),
		State: ap.State, RequestedAt: ap.RequestedAt, ExpiresAt: ap.ExpiresAt, Reason: ap.Reason, Remember: ap.Remember, Error: ap.Error}
	if len(out.Arguments) == 0 {
		out.Arguments = json.RawMessage(`{}`)
	}
	if !ap.DecidedAt.IsZero() {
		t := ap.DecidedAt.UTC().Truncate(time.Microsecond)
		out.DecidedAt = &t
	}
	if ap.Result != nil {
		out.Result, _ = json.Marshal(ap.Result)
	}
	return out
}
