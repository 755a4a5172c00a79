package server

import (
	"context"
	"errors"
	"net/http"

	"github.com/agentmcp/agentmcp/agent"
)

// exposureRoute is where an agent's exposure rules are read and replaced.
const exposureRoute = "/agents/{class}/{name}/exposure"

// exposureRoutes adds GET and PUT /agents/{class}/{name}/exposure: the
// agent's exposure rules (agent.Exposure), which decide what its MCP
// endpoint exposes.
func (s *Server) exposureRoutes(mux *http.ServeMux) {
	mux.Handle(exposureRoute, s.agentRoute(methods{http.MethodGet: s.getExposure, http.MethodPut: s.putExposure}))
}

// ExposureRequest is the body of PUT /agents/{class}/{name}/exposure and
// the answer of GET: patterns "SERVER" or "SERVER/TOOL", with * and ?
// wildcards (see agent.Exposure). Deny wins; an empty allow list allows
// everything. Absent lists are empty.
type ExposureRequest struct {
	Allow []string `json:"allow"`
	Deny  []string `json:"deny"`
}

func (s *Server) getExposure(w http.ResponseWriter, r *http.Request, a *agent.Agent) {
	e := a.Exposure()
	writeJSON(w, http.StatusOK, ExposureRequest{Allow: e.Allow, Deny: e.Deny})
}

// putExposure replaces the rules: 200 with the rules now in force, 400
// invalid_request naming the first bad pattern and why.
func (s *Server) putExposure(w http.ResponseWriter, r *http.Request, a *agent.Agent) {
	var req ExposureRequest
	if aerr := decodeBody(w, r, &req); aerr != nil {
		writeError(w, aerr)
		return
	}
	err := a.SetExposure(r.Context(), agent.Exposure{Allow: req.Allow, Deny: req.Deny})
	switch {
	case errors.Is(err, agent.ErrInvalidExposure):
		writeError(w, apiErrorf(http.StatusBadRequest, CodeInvalidRequest,
			"%v (patterns are SERVER or SERVER/TOOL, with * and ? wildcards)", err))
		return
	case errors.Is(err, agent.ErrExposureUnsupported):
		writeError(w, apiErrorf(http.StatusNotImplemented, CodeInternal, "this server's store cannot keep exposure rules"))
		return
	case err != nil:
		s.logger.Warn("cannot store exposure rules", "agent", a.Namespace(), "error", err)
		writeError(w, apiErrorf(http.StatusServiceUnavailable, CodeUnavailable, "the exposure rules could not be stored; retry"))
		return
	}
	s.getExposure(w, r, a)
}

// Exposure returns the agent's exposure rules (GET .../exposure).
func (c *Client) Exposure(ctx context.Context) (agent.Exposure, error) {
	var out ExposureRequest
	err := c.do(ctx, http.MethodGet, "/exposure", nil, &out)
	return agent.Exposure{Allow: out.Allow, Deny: out.Deny}, err
}

// SetExposure replaces the agent's exposure rules (PUT .../exposure) and
// returns the rules now in force.
func (c *Client) SetExposure(ctx context.Context, e agent.Exposure) (agent.Exposure, error) {
	var out ExposureRequest
	err := c.do(ctx, http.MethodPut, "/exposure", ExposureRequest{Allow: e.Allow, Deny: e.Deny}, &out)
	return agent.Exposure{Allow: out.Allow, Deny: out.Deny}, err
}
