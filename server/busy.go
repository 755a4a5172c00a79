package server

import (
	"fmt"
	"net/http"

	"github.com/agentmcp/agentmcp/api"
)

// busyReasons says what keeps the awake agent class/name from
// hibernating (agent.Busyness), with its MCP clients' questions waiting
// for an answer, or that it is kept awake.
func (s *Server) busyReasons(class, name string) string {
	return s.busyState(class, name).Reason
}

// busyState reports what keeps agent class/name awake, without waking it.
func (s *Server) busyState(class, name string) api.BusyState {
	if !s.host.IsAwake(class, name) {
		return api.BusyState{Reason: "asleep"}
	}
	b := s.host.Busy()[class+"/"+name]
	st := api.BusyState{Awake: true, InUse: b.InUse, Work: b.Work, Watchers: b.Watchers, Elicitations: b.Elicitations,
		Authorizing: b.Authorizing, Inputs: b.Inputs, KeepAwake: s.host.KeptAwake(class, name), Reason: b.String()}
	if st.Inputs > 0 {
		st.Reason += fmt.Sprintf(" (%d of them MCP client questions waiting for the client's answer, each cancelled if not answered in time)", st.Inputs)
	}
	switch {
	case st.Reason == "idle" && st.KeepAwake:
		st.Reason = "kept awake (a keep-awake server, or --keep-awake)"
	case st.KeepAwake:
		st.Reason += "; kept awake (a keep-awake server, or --keep-awake)"
	}
	return st
}

// busy is GET /agents/{class}/{name}/busy: what keeps the agent awake
// (api.BusyState). It never wakes an agent, nor counts as a request to it.
func (s *Server) busy(w http.ResponseWriter, r *http.Request) {
	if !methodIs(w, r, http.MethodGet) {
		return
	}
	class, name := r.PathValue("class"), r.PathValue("name")
	if aerr := s.checkAgent(class, name); aerr != nil {
		writeError(w, aerr)
		return
	}
	writeJSON(w, http.StatusOK, s.busyState(class, name))
}
