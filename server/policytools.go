package server

import (
	"net/http"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/policy"
)

// What the dashboard shows of the policy: each tool's effective action,
// and the presets to start an edit from.
const (
	policyToolsRoute  = "/agents/{class}/{name}/policy/tools"
	policyPresetRoute = "/agents/{class}/{name}/policy/presets/{preset}"
)

// policyToolsRoutes adds GET .../policy/tools and GET
// .../policy/presets/{preset}.
func (s *Server) policyToolsRoutes(mux *http.ServeMux) {
	mux.Handle(policyToolsRoute, s.agentRoute(methods{http.MethodGet: s.policyTools}))
	mux.Handle(policyPresetRoute, s.agentRoute(methods{http.MethodGet: s.policyPreset}))
}

// policyTools answers every tool of the agent's servers with the
// policy's decision for each caller (agent.Agent.PolicyToolsAPI).
func (s *Server) policyTools(w http.ResponseWriter, r *http.Request, a *agent.Agent) {
	writeJSON(w, http.StatusOK, a.PolicyToolsAPI())
}

// policyPreset answers the named preset (policy.Preset) as a policy to
// PUT; 404 not_found for an unknown name.
func (s *Server) policyPreset(w http.ResponseWriter, r *http.Request, a *agent.Agent) {
	p, ok := policy.Preset(r.PathValue("preset"))
	if !ok {
		writeError(w, apiErrorf(http.StatusNotFound, api.CodeNotFound, "no policy preset %q; the presets are %v", r.PathValue("preset"), policy.Presets()))
		return
	}
	writeJSON(w, http.StatusOK, p)
}
