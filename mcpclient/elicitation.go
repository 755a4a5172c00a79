package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentmcp/agentmcp/mcpclient/input"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// EventAdvertisementChanged reports that ServerInfo.Elicitation changed:
// the elicitation handlers were configured, or the server's seed was spent.
// Persist the new value with the server.
const EventAdvertisementChanged EventKind = "advertisement"

// ConfigureElicitationHandlers sets the handlers that answer elicitation
// requests, replacing any set before; nil, or handlers with neither mode,
// clears them.
//
// Live sessions use the new handlers at once: a request for a mode without
// a handler fails with an error naming the mode, wrapping ErrNoHandler.
// What a session advertises is decided when it starts: exactly the modes
// that have handlers, and no elicitation capability without any. Until
// this is first called, a server's seed (ClientOptions.Capabilities.
// Elicitation) is advertised instead, for one successful handshake.
//
// Every registered server gets an EventAdvertisementChanged.
func (m *Manager) ConfigureElicitationHandlers(h *input.ElicitationHandlers) {
	var cfg input.ElicitationHandlers
	if h != nil {
		cfg = *h
	}
	m.hooks.elicit.Store(&cfg)
	for _, c := range m.snapshot() {
		c.mu.Lock()
		state := c.state
		c.mu.Unlock()
		m.publish(Event{Kind: EventAdvertisementChanged, ServerID: c.ID(), State: state})
	}
}

// ElicitationHandlers returns a copy of the handlers that
// ConfigureElicitationHandlers set last, or nil when it was never called:
// for a layer that answers some requests itself and passes the others on
// to the handlers in place (package gateway).
func (m *Manager) ElicitationHandlers() *input.ElicitationHandlers {
	h := m.hooks.elicit.Load()
	if h == nil {
		return nil
	}
	cp := *h
	return &cp
}

// elicitationToAdvertise returns the elicitation capability for a new
// session of c, and whether it is c's seed.
func (c *server) elicitationToAdvertise() (caps *mcp.ElicitationCapabilities, seed bool) {
	if h := c.m.hooks.elicit.Load(); h != nil {
		return h.Capabilities(), false
	}
	c.hooks.mu.Lock()
	spent := c.hooks.seedSpent
	c.hooks.mu.Unlock()
	if x := c.opts.Client.Capabilities; x != nil && x.Elicitation != nil && !spent {
		return cloneElicitation(x.Elicitation), true
	}
	return nil, false
}

// spendSeed notes that a session advertising c's seed was established (the
// server accepted a request of it):
// unless handlers have been configured by now, later sessions advertise
// nothing, and the stored seed should go.
func (c *server) spendSeed() {
	if c.m.hooks.elicit.Load() != nil {
		return
	}
	c.hooks.mu.Lock()
	spent := c.hooks.seedSpent
	c.hooks.seedSpent = true
	c.hooks.mu.Unlock()
	if !spent {
		c.mu.Lock()
		state := c.state
		c.mu.Unlock()
		c.m.publish(Event{Kind: EventAdvertisementChanged, ServerID: c.ID(), State: state})
	}
}

func cloneElicitation(e *mcp.ElicitationCapabilities) *mcp.ElicitationCapabilities {
	if e == nil {
		return nil
	}
	cp := &mcp.ElicitationCapabilities{}
	if e.Form != nil {
		cp.Form = &mcp.FormElicitationCapabilities{}
	}
	if e.URL != nil {
		cp.URL = &mcp.URLElicitationCapabilities{}
	}
	return cp
}

// elicit is the session's go-sdk elicitation handler: for legacy
// elicitation/create requests and 2026-07-28 input requests. go-sdk has
// checked the parameters, and checks form answers and fills in defaults
// after it.
func (h *sessionHooks) elicit(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	ctx, done := h.requestCtx(ctx)
	defer done()
	return h.c.elicit(ctx, req.Params)
}

// elicitUntraced is elicit (telemetry.go): it runs the handler for the
// mode of p, within the limits of ServerRequestLimits: p's size, and the
// requests for input waiting.
func (c *server) elicitUntraced(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	req, err := input.NewElicitationRequest(c.ID(), p)
	if err != nil {
		return nil, err
	}
	if err := c.checkElicitationSize(req); err != nil {
		return nil, err
	}
	release, err := c.acquireInput("elicitation")
	if err != nil {
		return nil, err
	}
	defer release()
	cfg := c.m.hooks.elicit.Load()
	if cfg == nil {
		cfg = &input.ElicitationHandlers{}
	}
	return cfg.Elicit(ctx, req)
}

// elicitationComplete receives notifications/elicitation/complete.
func (h *sessionHooks) elicitationComplete(_ context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
	if req.Params == nil {
		return
	}
	h.mu.Lock()
	ch, ok := h.completions[req.Params.ElicitationID]
	if ok {
		delete(h.completions, req.Params.ElicitationID)
	}
	h.mu.Unlock()
	if ok {
		close(ch)
	}
}

// awaitCompletion registers for the completion of a URL elicitation. The
// result's done is closed when the server announces it; release must be
// called when the wait is over.
func (h *sessionHooks) awaitCompletion(id string) (done <-chan struct{}, release func()) {
	ch := make(chan struct{})
	h.mu.Lock()
	if h.completions == nil {
		h.completions = map[string]chan struct{}{}
	}
	h.completions[id] = ch
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		if h.completions[id] == ch {
			delete(h.completions, id)
		}
		h.mu.Unlock()
	}
}

// urlElicitationMiddleware handles the legacy URL elicitation required
// error (-32042): it runs the URL handler for each elicitation the error
// lists, waits for the server to announce their completion
// (URLCompletionWait), and retries the request once.
func (h *sessionHooks) urlElicitationMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		werr := urlElicitationRequired(err)
		if werr == nil || strings.HasPrefix(method, "notifications/") || method == "initialize" || method == "server/discover" {
			return res, err
		}
		reqs, err := h.satisfyURLElicitations(ctx, werr, err)
		if err != nil {
			return nil, err
		}
		res, err = next(ctx, method, req)
		if urlElicitationRequired(err) != nil {
			return nil, &input.URLElicitationRequiredError{ServerID: h.c.ID(), Elicitations: reqs, Err: err}
		}
		return res, err
	}
}

// urlElicitationRequired returns the -32042 error in err, if any.
func urlElicitationRequired(err error) *jsonrpc.Error {
	if err == nil {
		return nil // werr below escapes: a call that succeeded allocates nothing
	}
	var werr *jsonrpc.Error
	if errors.As(err, &werr) && werr.Code == mcp.CodeURLElicitationRequired {
		return werr
	}
	return nil
}

// satisfyURLElicitations runs the URL handler for the elicitations of
// werr, then waits for their completion.
func (h *sessionHooks) satisfyURLElicitations(ctx context.Context, werr *jsonrpc.Error, orig error) ([]*input.ElicitationRequest, error) {
	var data struct {
		Elicitations []*mcp.ElicitParams `json:"elicitations"`
	}
	if len(werr.Data) > 0 {
		if err := json.Unmarshal(werr.Data, &data); err != nil {
			return nil, protocolError("mcp server %q: malformed URL elicitation required error: %v", h.c.ID(), err)
		}
	}
	if max := h.c.m.limits().PerServer; len(data.Elicitations) > max {
		return nil, protocolError("mcp server %q: a URL elicitation required error lists %d elicitations, more than the %d a server may have pending", h.c.ID(), len(data.Elicitations), max)
	}
	var reqs []*input.ElicitationRequest
	for _, p := range data.Elicitations {
		if p == nil || input.ElicitationMode(p) != "url" || p.URL == "" {
			return nil, protocolError("mcp server %q: a URL elicitation required error must list URL-mode elicitations with a URL", h.c.ID())
		}
		reqs = append(reqs, &input.ElicitationRequest{ServerID: h.c.ID(), Mode: "url", Message: p.Message, URL: p.URL, ElicitationID: p.ElicitationID, Params: p})
	}
	if len(reqs) == 0 {
		return nil, &input.URLElicitationRequiredError{ServerID: h.c.ID(), Err: orig}
	}

	// The handlers run within the call; they end with the Manager too.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	defer context.AfterFunc(h.c.m.ctx, func() { cancel(ErrClosed) })()

	// Register first: a completion may come as soon as the user is done.
	var pending []<-chan struct{}
	for _, p := range data.Elicitations {
		if p.ElicitationID == "" {
			continue
		}
		done, release := h.awaitCompletion(p.ElicitationID)
		defer release()
		pending = append(pending, done)
	}
	for _, p := range data.Elicitations {
		p.Mode = "url"
		res, err := h.c.elicit(ctx, p)
		if err != nil {
			return nil, fmt.Errorf("mcp server %q requires URL elicitation: %w", h.c.ID(), err)
		}
		if res.Action != "accept" {
			return nil, &input.URLElicitationRequiredError{ServerID: h.c.ID(), Elicitations: reqs, Action: res.Action, Err: orig}
		}
	}

	wait := 2 * time.Minute
	if cfg := h.c.m.hooks.elicit.Load(); cfg != nil && cfg.URLCompletionWait != 0 {
		wait = cfg.URLCompletionWait
	}
	if wait < 0 || len(pending) == 0 {
		return reqs, nil
	}
	timeout := h.c.m.clock.After(wait)
	for _, done := range pending {
		select {
		case <-done:
		case <-timeout:
			// The server may never say: retry, and let it decide.
			h.c.m.logger.Info("mcp server did not announce the completion of a URL elicitation; retrying the request", "server", h.c.ID())
			return reqs, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return reqs, nil
}
