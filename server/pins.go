package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/server/internal/failure"
)

// The agent's pinned tool definitions (agent.Agent.Pins, DecidePin).
const (
	pinsRoute = "/agents/{class}/{name}/pins"
	pinRoute  = "/agents/{class}/{name}/pins/{server}/{tool}"
)

// pinRoutes adds GET .../pins and POST .../pins/{server}/{tool}.
func (s *Server) pinRoutes(mux *http.ServeMux) {
	mux.Handle(pinsRoute, s.agentRoute(methods{http.MethodGet: s.listPins}))
	mux.Handle(pinRoute, s.agentRoute(methods{http.MethodPost: s.decidePin}))
}

func (s *Server) listPins(w http.ResponseWriter, r *http.Request, a *agent.Agent) {
	pins := a.Pins()
	out := api.PinsResponse{Pins: make([]api.Pin, 0, len(pins))}
	for _, p := range pins {
		out.Pins = append(out.Pins, p.API())
	}
	writeJSON(w, http.StatusOK, out)
}

// decidePin accepts or rejects a tool's definition: 200 with the pin as it
// is now, 404 unknown_pin for a tool the agent has no pin of.
func (s *Server) decidePin(w http.ResponseWriter, r *http.Request, a *agent.Agent) {
	var req api.PinDecisionRequest
	if aerr := decodeBody(w, r, &req); aerr != nil {
		writeError(w, aerr)
		return
	}
	if req.Decision != agent.PinAccept && req.Decision != agent.PinReject {
		writeError(w, apiErrorf(http.StatusBadRequest, api.CodeInvalidRequest, `decision must be "accept" or "reject"`))
		return
	}
	if err := agent.CheckDecider(req.By); err != nil {
		writeError(w, apiErrorf(http.StatusBadRequest, api.CodeInvalidRequest, "by: %s", strings.TrimPrefix(err.Error(), agent.ErrInvalidDecider.Error()+": ")))
		return
	}
	ctx := agent.WithDecider(r.Context(), req.By) // a label the request states
	p, err := a.DecidePin(ctx, r.PathValue("server"), r.PathValue("tool"), req.Decision)
	switch {
	case err == nil:
		writeJSON(w, http.StatusOK, api.PinResponse{Pin: p.API()})
	case errors.Is(err, agent.ErrUnknownPin):
		writeError(w, apiErrorf(http.StatusNotFound, api.CodeUnknownPin, "%v", err))
	case errors.Is(err, agent.ErrPinsUnsupported):
		writeError(w, apiErrorf(http.StatusNotImplemented, api.CodeInternal, "this server's store cannot keep pinned tool definitions"))
	default:
		if aerr := failure.Store(err); aerr != nil {
			writeError(w, aerr)
			return
		}
		s.logger.Warn("cannot store a pin decision", "agent", a.Namespace(), "error", err)
		writeError(w, apiErrorf(http.StatusServiceUnavailable, api.CodeUnavailable, "the decision could not be stored; retry"))
	}
}

// pinRefused answers 409 tool_changed, before the catalog check, for a
// call of a tool the agent's pins keep out (which ListTools leaves out, so
// that it would otherwise be an unknown tool). It reports whether it
// answered.
func pinRefused(w http.ResponseWriter, r *http.Request, a *agent.Agent, serverID, tool string, args json.RawMessage) bool {
	err := a.CheckPin(r.Context(), serverID, tool)
	if err == nil {
		return false
	}
	a.AuditRefused(r.Context(), serverID, tool, args, err)
	aerr := apiErrorf(http.StatusConflict, api.CodeToolChanged, "%v", err)
	aerr.ServerID = serverID
	writeError(w, aerr)
	return true
}
