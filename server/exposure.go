package server

import (
	"errors"
	"net/http"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/api"
)

// exposureRoute is where an agent's exposure rules are read and replaced.
const exposureRoute = "/agents/{class}/{name}/exposure"

// exposureRoutes adds GET and PUT /agents/{class}/{name}/exposure: the
// agent's exposure rules (agent.Exposure), which decide what its MCP
// endpoint exposes.
func (s *Server) exposureRoutes(mux *http.ServeMux) {
	mux.Handle(exposureRoute, s.agentRoute(methods{http.MethodGet: s.getExposure, http.MethodPut: s.putExposure}))
}

func (s *Server) getExposure(w http.ResponseWriter, r *http.Request, a *agent.Agent) {
	e := a.Exposure()
	writeJSON(w, http.StatusOK, api.Exposure{Allow: e.Allow, Deny: e.Deny})
}

// putExposure replaces the rules: 200 with the rules now in force, 400
// invalid_request naming the first bad pattern and why.
func (s *Server) putExposure(w http.ResponseWriter, r *http.Request, a *agent.Agent) {
	var req api.Exposure
	if aerr := decodeBody(w, r, &req); aerr != nil {
		writeError(w, aerr)
		return
	}
	err := a.SetExposure(r.Context(), agent.Exposure{Allow: req.Allow, Deny: req.Deny})
	switch {
	case errors.Is(err, agent.ErrInvalidExposure):
		writeError(w, apiErrorf(http.StatusBadRequest, api.CodeInvalidRequest,
			"%v (patterns are SERVER or SERVER/TOOL, with * and ? wildcards)", err))
		return
	case errors.Is(err, agent.ErrExposureUnsupported):
		writeError(w, apiErrorf(http.StatusNotImplemented, api.CodeInternal, "this server's store cannot keep exposure rules"))
		return
	case err != nil:
		s.logger.Warn("cannot store exposure rules", "agent", a.Namespace(), "error", err)
		writeError(w, apiErrorf(http.StatusServiceUnavailable, api.CodeUnavailable, "the exposure rules could not be stored; retry"))
		return
	}
	s.getExposure(w, r, a)
}
