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
	mux.Handle(exposureRoute, s.agentRoute(methods{http.MethodGet: handle(s, s.getExposure), http.MethodPut: handle(s, s.putExposure)}))
}

func (s *Server) getExposure(r *http.Request, a *agent.Agent, _ *noBody) (api.Exposure, error) {
	e := a.Exposure()
	return api.Exposure{Allow: e.Allow, Deny: e.Deny}, nil
}

// putExposure replaces the rules: 200 with the rules now in force, 400
// invalid_request naming the first bad pattern and why.
func (s *Server) putExposure(r *http.Request, a *agent.Agent, req *api.Exposure) (api.Exposure, error) {
	err := a.SetExposure(r.Context(), agent.Exposure{Allow: req.Allow, Deny: req.Deny})
	switch {
	case errors.Is(err, agent.ErrInvalidExposure):
		return api.Exposure{}, apiErrorf(http.StatusBadRequest, api.CodeInvalidRequest,
			"%v (patterns are SERVER or SERVER/TOOL, with * and ? wildcards)", err)
	case errors.Is(err, agent.ErrExposureUnsupported):
		return api.Exposure{}, apiErrorf(http.StatusNotImplemented, api.CodeInternal, "this server's store cannot keep exposure rules")
	case err != nil:
		s.logger.Warn("cannot store exposure rules", "agent", a.Namespace(), "error", err)
		return api.Exposure{}, apiErrorf(http.StatusServiceUnavailable, api.CodeUnavailable, "the exposure rules could not be stored; retry")
	}
	return s.getExposure(r, a, nil)
}
