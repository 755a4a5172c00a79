package mcpclient

import (
	"github.com/agentmcp/agentmcp/mcpclient/internal/inbound"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServerRequestLimits bounds what servers can make the Manager hold by
// asking it for something: requests for input (elicitation and sampling,
// as legacy JSON-RPC requests or as 2026-07-28 input requests of a call),
// roots/list and ping. A request past a limit is refused at once: the
// server gets a JSON-RPC error, and a call whose input request is refused
// fails with an error wrapping ErrServerRequestRefused. The zero value
// gives the defaults each field documents.
//
// Where a request may arrive follows the protocol: a 2026-07-28 server
// sends no JSON-RPC requests at all (input requests belong to the result
// of the call that needs them), so any request it sends is dropped unread;
// a legacy session gets none but ping before its handshake is done; and
// legacy requests may arrive on the standalone stream, with no call in
// flight, as 2025-11-25 allows, under the same limits.
//
// Package mcpclient/internal/inbound applies them.
type ServerRequestLimits struct {
	// PerServer caps, for one server, both the requests for input waiting
	// for their answer and the JSON-RPC requests of any kind being
	// answered at once. Zero means 4.
	PerServer int

	// PerManager caps the requests for input waiting for their answer
	// across all the Manager's servers (an agent's, in agentmcp serve).
	// Zero means 16.
	PerManager int

	// MaxElicitationSize caps one elicitation request (its message, form
	// schema and URL, as JSON), in bytes. Zero means 64 KiB.
	MaxElicitationSize int

	// MaxSamplingSize caps one sampling request (its messages, system
	// prompt and tools, as JSON), in bytes. Zero means 1 MiB.
	MaxSamplingSize int
}

// limits returns the Manager's server request limits, with their
// defaults.
func (m *Manager) limits() inbound.Limits {
	return inbound.Limits(m.opts.ServerRequests).WithDefaults()
}

// ErrServerRequestRefused is wrapped by the error of a call whose server
// asked for more than ServerRequestLimits allows.
var ErrServerRequestRefused = inbound.ErrRefused

// acquireInput takes a slot for a request for input (elicitation,
// sampling) of c: one of PerServer for c and one of PerManager. release
// gives them back.
func (c *server) acquireInput(kind string) (release func(), err error) {
	return c.m.hooks.inputs.Acquire(&c.hooks.inputs, c.m.limits(), c.ID(), kind)
}

// requestLimits is the session's receiving middleware that applies the
// server request limits when the connection is not a sessionConn, whose
// gate applies them as messages are read (inbound.Middleware).
func (h *sessionHooks) requestLimits() mcp.Middleware {
	return inbound.Middleware(h.c.m.limits(), func(req mcp.Request) bool {
		if pc, ok := h.s.conn.(*sessionConn); ok {
			return pc.gate.Modern() // and the gate dropped the request
		}
		return isModern(req)
	})
}
