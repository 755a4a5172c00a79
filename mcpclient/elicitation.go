package mcpclient

import (
	"context"
	"time"

	"github.com/agentmcp/agentmcp/mcpclient/input"
	"github.com/agentmcp/agentmcp/mcpclient/internal/inbound"
	"github.com/agentmcp/agentmcp/mcpclient/internal/urlelicit"
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
	if err := inbound.CheckElicitation(c.m.limits(), c.ID(), req); err != nil {
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
	if req.Params != nil {
		h.completions.Complete(req.Params.ElicitationID)
	}
}

// urlElicitations is the session's sending middleware for the legacy URL
// elicitation required error (-32042): it runs the URL handler for each
// elicitation the error lists, waits for the server to announce their
// completion (URLCompletionWait), and retries the request once.
func (h *sessionHooks) urlElicitations() mcp.Middleware {
	m := h.c.m
	return urlelicit.Middleware(&h.completions, urlelicit.Config{
		ServerID:        h.c.ID,
		MaxElicitations: m.limits().PerServer,
		Elicit:          h.c.elicit,
		Wait: func() time.Duration {
			if cfg := m.hooks.elicit.Load(); cfg != nil {
				return cfg.URLCompletionWait
			}
			return 0
		},
		After:  m.clock.After,
		Logger: m.logger,
		Life:   m.ctx,
		Closed: ErrClosed,
	})
}
