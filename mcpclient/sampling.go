package mcpclient

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A SamplingHandler answers a server's request for an LLM completion
// (sampling/createMessage, a feature deprecated in 2026-07-28): it should
// let the user review the request, respect MaxTokens, and return the
// model's message. An error fails the server's request. It may be called
// concurrently; ctx ends like an elicitation handler's (see
// ElicitationHandlers).
type SamplingHandler func(ctx context.Context, req *mcp.CreateMessageParams, serverID string) (*mcp.CreateMessageResult, error)

// ConfigureSampling sets the handler for sampling requests, replacing any;
// nil clears it. Live sessions use the new handler at once (without one, a
// request fails with an error wrapping ErrNoHandler). The sampling
// capability is advertised by sessions that start while a handler is set.
func (m *Manager) ConfigureSampling(h SamplingHandler) {
	if h == nil {
		m.hooks.sampling.Store(nil)
		return
	}
	m.hooks.sampling.Store(&h)
}

// SamplingHandler returns the handler that ConfigureSampling set, or nil.
func (m *Manager) SamplingHandler() SamplingHandler {
	if h := m.hooks.sampling.Load(); h != nil {
		return *h
	}
	return nil
}

// createMessage is the session's go-sdk sampling handler.
func (h *sessionHooks) createMessage(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	fn := h.c.m.hooks.sampling.Load()
	if fn == nil {
		return nil, &noHandlerError{fmt.Sprintf("no sampling handler is configured for mcp server %q", h.c.ID())}
	}
	ctx, done := h.requestCtx(ctx)
	defer done()
	params := req.Params
	if params == nil {
		params = &mcp.CreateMessageParams{}
	}
	if err := h.c.checkSamplingSize(params); err != nil {
		return nil, err
	}
	release, err := h.c.acquireInput("sampling")
	if err != nil {
		return nil, err
	}
	defer release()
	res, err := (*fn)(ctx, params, h.c.ID())
	switch {
	case err != nil:
		return nil, fmt.Errorf("sampling handler: %w", err)
	case res == nil:
		return nil, fmt.Errorf("sampling handler returned no result")
	}
	return res, nil
}
