package server

import (
	"context"
	"net/http"
	"net/url"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/agent"
)

// ElicitationsFrameType is the type of the stream frames that carry an
// agent's pending elicitations: {"type":"agentmcp_elicitations",
// "elicitations":[...]}. One is sent on connect when some are pending, and
// after every change.
const ElicitationsFrameType = "agentmcp_elicitations"

// ElicitationsFrame is the frame of ElicitationsFrameType.
type ElicitationsFrame struct {
	Type         string        `json:"type"`
	Elicitations []Elicitation `json:"elicitations"`
}

// Elicitation is a server's pending request for the user's input, as the
// API and the streams show it.
type Elicitation = agent.Elicitation

// ElicitationAnswer is the body of POST .../elicitations/{id}.
type ElicitationAnswer struct {
	// Action is "accept", "decline" or "cancel".
	Action string `json:"action"`
	// Content is the form's content, when accepting in form mode.
	Content map[string]any `json:"content,omitempty"`
}

func (s *Server) listElicitations(w http.ResponseWriter, r *http.Request, a *agent.Agent) {
	writeJSON(w, http.StatusOK, struct {
		Elicitations []Elicitation `json:"elicitations"`
	}{a.Elicitations()})
}

func (s *Server) answerElicitation(w http.ResponseWriter, r *http.Request, a *agent.Agent) {
	var req ElicitationAnswer
	if aerr := decodeBody(w, r, &req); aerr != nil {
		writeError(w, aerr)
		return
	}
	switch req.Action {
	case "accept", "decline", "cancel":
	default:
		writeError(w, apiErrorf(http.StatusBadRequest, CodeInvalidRequest, "action %q: want accept, decline or cancel", req.Action))
		return
	}
	res := &mcp.ElicitResult{Action: req.Action}
	if req.Action == "accept" {
		res.Content = req.Content
	}
	id := r.PathValue("id")
	if !a.AnswerElicitation(id, res) {
		writeError(w, apiErrorf(http.StatusNotFound, CodeUnknownElicitation, "no pending elicitation %q (answered already, or its call ended)", id))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// Elicitations returns the agent's pending elicitations.
func (c *Client) Elicitations(ctx context.Context) ([]Elicitation, error) {
	var out struct {
		Elicitations []Elicitation `json:"elicitations"`
	}
	err := c.do(ctx, http.MethodGet, "/elicitations", nil, &out)
	return out.Elicitations, err
}

// AnswerElicitation answers a pending elicitation.
func (c *Client) AnswerElicitation(ctx context.Context, id string, answer ElicitationAnswer) error {
	return c.do(ctx, http.MethodPost, "/elicitations/"+url.PathEscape(id), answer, nil)
}
