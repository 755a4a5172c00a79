//lint:file-ignore SA1019 roots, sampling and logging are deprecated from 2026-07-28 on (SEP-2577); agentmcp speaks the earlier eras too, which have them

package mcpclient

import (
	"context"

	"github.com/agentmcp/agentmcp/mcpclient/input"
	"github.com/agentmcp/agentmcp/mcpclient/internal/inbound"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ConfigureSampling sets the handler for sampling requests, replacing any;
// nil clears it. Live sessions use the new handler at once (without one, a
// request fails with an error wrapping ErrNoHandler). The sampling
// capability is advertised by sessions that start while a handler is set.
func (m *Manager) ConfigureSampling(h input.SamplingHandler) {
	if h == nil {
		m.hooks.sampling.Store(nil)
		return
	}
	m.hooks.sampling.Store(&h)
}

// SamplingHandler returns the handler that ConfigureSampling set, or nil.
func (m *Manager) SamplingHandler() input.SamplingHandler {
	if h := m.hooks.sampling.Load(); h != nil {
		return *h
	}
	return nil
}

// createMessage is the session's go-sdk sampling handler: it runs the
// handler within the limits of ServerRequestLimits: the request's size
// (MaxSamplingSize), and the requests for input waiting.
func (h *sessionHooks) createMessage(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	var fn input.SamplingHandler
	if p := h.c.m.hooks.sampling.Load(); p != nil {
		fn = *p
	}
	params := req.Params
	if params == nil {
		params = &mcp.CreateMessageParams{}
	}
	if fn == nil {
		return fn.Sample(ctx, h.c.ID(), params) // fails: no handler, no slot held
	}
	ctx, done := h.requestCtx(ctx)
	defer done()
	if err := inbound.CheckSampling(h.c.m.limits(), h.c.ID(), params); err != nil {
		return nil, err
	}
	release, err := h.c.acquireInput("sampling")
	if err != nil {
		return nil, err
	}
	defer release()
	return fn.Sample(ctx, h.c.ID(), params)
}
