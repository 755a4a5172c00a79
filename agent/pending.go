package agent

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/mcpclient/input"
	"github.com/agentmcp/agentmcp/netguard"
)

// Elicitation is a server's request for the user's input (the seed's
// elicitation), waiting for an answer through AnswerElicitation: what an
// API or a dashboard shows. It is queued only when Options.ElicitationTimeout
// is positive.
type Elicitation struct {
	// ID identifies the request for AnswerElicitation.
	ID string `json:"id"`
	// ServerID is the MCP server that asks.
	ServerID string `json:"serverId"`
	// Mode is "form" (answer with content matching RequestedSchema) or
	// "url" (accepting means the user agreed to open URL).
	Mode string `json:"mode"`
	// Message is the server's message, sanitised.
	Message string `json:"message"`
	// RequestedSchema is the form's JSON schema, in form mode.
	RequestedSchema json.RawMessage `json:"requestedSchema,omitempty"`
	// URL is the page to open, in URL mode.
	URL string `json:"url,omitempty"`
	// CallID is the tracked call the request belongs to (TrackCall), or
	// empty.
	CallID string `json:"callId,omitempty"`
}

// Elicitations returns the pending elicitations, oldest first.
func (a *Agent) Elicitations() []Elicitation { return a.pending.list() }

// AnswerElicitation answers a pending elicitation. It reports false when
// there is none with id: answered already, or its call ended.
func (a *Agent) AnswerElicitation(id string, res *mcp.ElicitResult) bool {
	return a.pending.answer(id, res)
}

// pendingElicitation is an elicitation waiting for its answer.
type pendingElicitation struct {
	e      Elicitation
	answer chan *mcp.ElicitResult // capacity 1
}

// elicitations holds an agent's pending elicitations. Its handler is the
// Manager's elicitation handler for both modes: it queues the request,
// tells the watchers, and waits for an answer, the end of the call, the
// timeout or the agent's closing (which answer cancel).
type elicitations struct {
	timeout time.Duration
	changed func()
	quit    <-chan struct{}
	// callOf finds the tracked call of a request (Agent.TrackCall); nil
	// means none.
	callOf func(ctx context.Context, serverID string) string

	// mu guards the fields below.
	mu      sync.Mutex
	pending map[string]*pendingElicitation
	order   []string
}

func (el *elicitations) init(timeout time.Duration, quit <-chan struct{}, changed func()) {
	el.timeout, el.quit, el.changed = timeout, quit, changed
	el.pending = map[string]*pendingElicitation{}
}

func (el *elicitations) handler() *input.ElicitationHandlers {
	return &input.ElicitationHandlers{Form: el.handle, URL: el.handle}
}

func (el *elicitations) handle(ctx context.Context, req *input.ElicitationRequest, serverID string) (*mcp.ElicitResult, error) {
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
	if el.callOf != nil {
		p.e.CallID = el.callOf(ctx, serverID)
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

// count reports how many elicitations are pending.
func (el *elicitations) count() int {
	el.mu.Lock()
	defer el.mu.Unlock()
	return len(el.order)
}

// answer answers a pending elicitation; false when there is none with id.
func (el *elicitations) answer(id string, res *mcp.ElicitResult) bool {
	p := el.take(id)
	if p == nil {
		return false
	}
	p.answer <- res
	el.changed()
	return true
}

// Busyness is what keeps an awake agent from hibernating (Agent.Busy,
// and the uses a Host counts): for an operator asking why.
type Busyness struct {
	// InUse counts the uses of a Host not released yet: requests to the
	// agent in flight (agentmcp serve: an API call, an MCP request).
	InUse int `json:"inUse,omitempty"`
	// Work counts calls, adds and reconnections in flight, and Holds.
	Work int `json:"work,omitempty"`
	// Watchers counts the open watches (Watch: a WebSocket or SSE stream).
	Watchers int `json:"watchers,omitempty"`
	// Elicitations counts the pending elicitations (Elicitations).
	Elicitations int `json:"elicitations,omitempty"`
	// Authorizing is set while an OAuth flow may still complete.
	Authorizing bool `json:"authorizing,omitempty"`
	// Inputs counts the questions the agent's attachments asked their own
	// clients and wait for (InputAsker: the MCP endpoint's clients). Each
	// belongs to a call in flight, counted in Work too; String leaves
	// them out.
	Inputs int `json:"inputs,omitempty"`
}

// Busyness reports what keeps the agent busy now (InUse is the Host's:
// zero here).
func (a *Agent) Busyness() Busyness {
	return Busyness{
		Work:         int(a.busyN.Load()),
		Watchers:     a.updates.watching(),
		Elicitations: a.pending.count(),
		Authorizing:  a.authorizing(),
		Inputs:       a.pendingInputs(),
	}
}

// Idle reports whether nothing in b keeps the agent awake.
func (b Busyness) Idle() bool { return b == Busyness{} }

// String says what b holds, for a person: "1 request in flight, 2 calls
// in flight", or "idle".
func (b Busyness) String() string {
	var parts []string
	count := func(n int, one, many string) {
		switch {
		case n == 1:
			parts = append(parts, "1 "+one)
		case n > 1:
			parts = append(parts, strconv.Itoa(n)+" "+many)
		}
	}
	count(b.InUse, "request in flight", "requests in flight")
	count(b.Work, "call (or add, reconnection) in flight", "calls (or adds, reconnections) in flight")
	count(b.Watchers, "open stream", "open streams")
	count(b.Elicitations, "pending elicitation", "pending elicitations")
	if b.Authorizing {
		parts = append(parts, "an OAuth sign-in in progress")
	}
	if len(parts) == 0 {
		return "idle"
	}
	return strings.Join(parts, ", ")
}

// Busy returns what keeps each awake agent that is not idle awake, by
// "class/name" (agents being opened are left out).
func (h *Host) Busy() map[string]Busyness {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string]Busyness{}
	for key, e := range h.awake {
		select {
		case <-e.ready:
		default:
			continue
		}
		if e.err != nil || e.a == nil {
			continue
		}
		b := e.a.Busyness()
		b.InUse = e.refs
		if !b.Idle() {
			out[key] = b
		}
	}
	return out
}

// KeptAwake reports whether the awake agent class/name is kept awake
// whatever it does (HostOptions.KeepAwake, or a keep-awake server): its
// idle timeout never hibernates it.
func (h *Host) KeptAwake(class, name string) bool {
	key := class + "/" + name
	h.mu.Lock()
	e, ok := h.awake[key]
	keep := h.keep[key]
	h.mu.Unlock()
	if !ok {
		return false
	}
	select {
	case <-e.ready:
	default:
		return keep // being opened
	}
	return keep || (e.err == nil && e.a != nil && e.a.KeepAwake())
}
