package server

import (
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/api"
)

func (s *Server) listElicitations(w http.ResponseWriter, r *http.Request, a *agent.Agent) {
	writeJSON(w, http.StatusOK, struct {
		Elicitations []agent.Elicitation `json:"elicitations"`
	}{a.Elicitations()})
}

func (s *Server) answerElicitation(w http.ResponseWriter, r *http.Request, a *agent.Agent) {
	var req api.ElicitationAnswer
	if aerr := decodeBody(w, r, &req); aerr != nil {
		writeError(w, aerr)
		return
	}
	switch req.Action {
	case "accept", "decline", "cancel":
	default:
		writeError(w, apiErrorf(http.StatusBadRequest, api.CodeInvalidRequest, "action %q: want accept, decline or cancel", req.Action))
		return
	}
	res := &mcp.ElicitResult{Action: req.Action}
	if req.Action == "accept" {
		res.Content = req.Content
	}
	id := r.PathValue("id")
	if !a.AnswerElicitation(id, res) {
		writeError(w, apiErrorf(http.StatusNotFound, api.CodeUnknownElicitation, "no pending elicitation %q (answered already, or its call ended)", id))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
