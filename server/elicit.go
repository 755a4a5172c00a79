package server

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/netguard"
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

// Elicitation is a server's pending request for the user's input (the
// seed's elicitation), waiting for an answer through the API or the
// dashboard.
type Elicitation struct {
	// ID identifies the request in the API.
	ID string `json:"id"`
	// ServerID is the MCP server that asks.
	ServerID string `json:"serverId"`
	// Mode is "form" (answer with content matching RequestedSchema) or
	// "url" (accepting means the user agreed to open URL).
	Mode    string `json:"mode"`
	Message string `json:"message"`
	// RequestedSchema is the form's JSON schema, in form mode.
	RequestedSchema json.RawMessage `json:"requestedSchema,omitempty"`
	// URL is the page to open, in URL mode.
	URL string `json:"url,omitempty"`
}

// ElicitationAnswer is the body of POST .../elicitations/{id}.
type ElicitationAnswer struct {
	// Action is "accept", "decline" or "cancel".
	Action string `json:"action"`
	// Content is the form's content, when accepting in form mode.
	Content map[string]any `json:"content,omitempty"`
}

// pendingElicitation is an elicitation waiting for its answer.
type pendingElicitation struct {
	e      Elicitation
	answer chan *mcp.ElicitResult // capacity 1
}

// elicitations holds an agent's pending elicitations. Its handler is the
// Manager's elicitation handler for both modes: it queues the request,
// tells the hub, and waits for an answer, the end of the call, the timeout
// or the server's shutdown.
type elicitations struct {
	timeout time.Duration
	changed func()
	quit    <-chan struct{} // the server's shutdown

	// mu guards the fields below.
	mu      sync.Mutex
	pending map[string]*pendingElicitation
	order   []string
}

func newElicitations(timeout time.Duration, quit <-chan struct{}, changed func()) *elicitations {
	return &elicitations{timeout: timeout, quit: quit, changed: changed, pending: map[string]*pendingElicitation{}}
}

func (el *elicitations) handler() *mcpclient.ElicitationHandlers {
	return &mcpclient.ElicitationHandlers{Form: el.handle, URL: el.handle}
}

func (el *elicitations) handle(ctx context.Context, req *mcpclient.ElicitationRequest, serverID string) (*mcp.ElicitResult, error) {
	p := &pendingElicitation{
		e: Elicitation{
			ID:              rand.Text()[:16],
			ServerID:        serverID,
			Mode:            req.Mode,
			Message:         netguard.Sanitize(req.Message),
			RequestedSchema: req.RequestedSchema,
			URL:             req.URL,
		},
		answer: make(chan *mcp.ElicitResult, 1),
	}
	el.mu.Lock()
	el.pending[p.e.ID] = p
	el.order = append(el.order, p.e.ID)
	el.mu.Unlock()
	el.changed()
	defer func() {
		if el.take(p.e.ID) != nil {
			el.changed()
		}
	}()
	timer := time.NewTimer(el.timeout)
	defer timer.Stop()
	select {
	case res := <-p.answer:
		return res, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-timer.C:
		return &mcp.ElicitResult{Action: "cancel"}, nil
	case <-el.quit:
		return &mcp.ElicitResult{Action: "cancel"}, nil
	}
}

// take removes a pending elicitation and returns it, or nil.
func (el *elicitations) take(id string) *pendingElicitation {
	el.mu.Lock()
	defer el.mu.Unlock()
	p, ok := el.pending[id]
	if !ok {
		return nil
	}
	delete(el.pending, id)
	for i, x := range el.order {
		if x == id {
			el.order = append(el.order[:i:i], el.order[i+1:]...)
			break
		}
	}
	return p
}

// list returns the pending elicitations, oldest first.
func (el *elicitations) list() []Elicitation {
	el.mu.Lock()
	defer el.mu.Unlock()
	out := make([]Elicitation, 0, len(el.order))
	for _, id := range el.order {
		out = append(out, el.pending[id].e)
	}
	return out
}

// answer answers a pending elicitation; false when there is none with id
// (answered already, or ended).
func (el *elicitations) answer(id string, res *mcp.ElicitResult) bool {
	p := el.take(id)
	if p == nil {
		return false
	}
	p.answer <- res
	el.changed()
	return true
}

func (s *Server) listElicitations(w http.ResponseWriter, r *http.Request, e *entry) {
	writeJSON(w, http.StatusOK, struct {
		Elicitations []Elicitation `json:"elicitations"`
	}{e.elicit.list()})
}

func (s *Server) answerElicitation(w http.ResponseWriter, r *http.Request, e *entry) {
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
	if !e.elicit.answer(id, res) {
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
