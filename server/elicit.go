package server

import (
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/api"
)

// elicitationList is GET .../elicitations.
type elicitationList struct {
	Elicitations []agent.Elicitation `json:"elicitations"`
}

func (s *Server) listElicitations(r *http.Request, a *agent.Agent, _ *noBody) (elicitationList, error) {
	return elicitationList{a.Elicitations()}, nil
}

func (s *Server) answerElicitation(r *http.Request, a *agent.Agent, req *api.ElicitationAnswer) (noContent, error) {
	switch req.Action {
	case "accept", "decline", "cancel":
	default:
		return noContent{}, apiErrorf(http.StatusBadRequest, api.CodeInvalidRequest, "action %q: want accept, decline or cancel", req.Action)
	}
	res := &mcp.ElicitResult{Action: req.Action}
	if req.Action == "accept" {
		res.Content = req.Content
	}
	id := r.PathValue("id")
	if !a.AnswerElicitation(id, res) {
		return noContent{}, apiErrorf(http.StatusNotFound, api.CodeUnknownElicitation, "no pending elicitation %q (answered already, or its call ended)", id)
	}
	return noContent{}, nil
}
