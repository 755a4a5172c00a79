package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/agentmcp/agentmcp/mcpclient/input"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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

// Default server request limits.
const (
	defaultRequestsPerServer  = 4
	defaultRequestsPerManager = 16
	defaultMaxElicitationSize = 64 << 10
	defaultMaxSamplingSize    = 1 << 20
	// maxOtherRequestSize caps the params of ping, roots/list and any
	// other request: they need none to speak of.
	maxOtherRequestSize = 4 << 10
)

// withDefaults returns l with its zero fields filled in.
func (l ServerRequestLimits) withDefaults() ServerRequestLimits {
	if l.PerServer <= 0 {
		l.PerServer = defaultRequestsPerServer
	}
	if l.PerManager <= 0 {
		l.PerManager = defaultRequestsPerManager
	}
	if l.MaxElicitationSize <= 0 {
		l.MaxElicitationSize = defaultMaxElicitationSize
	}
	if l.MaxSamplingSize <= 0 {
		l.MaxSamplingSize = defaultMaxSamplingSize
	}
	return l
}

// maxParams is the largest params a request of method may carry.
func (l ServerRequestLimits) maxParams(method string) int {
	switch method {
	case "elicitation/create":
		return l.MaxElicitationSize
	case "sampling/createMessage":
		return l.MaxSamplingSize
	}
	return maxOtherRequestSize
}

// limits returns the Manager's server request limits.
func (m *Manager) limits() ServerRequestLimits {
	return m.opts.ServerRequests.withDefaults()
}

// ErrServerRequestRefused is wrapped by the error of a call whose server
// asked for more than ServerRequestLimits allows.
var ErrServerRequestRefused = errors.New("mcp server request refused")

// codeRefused is the JSON-RPC error code a server gets for a request
// refused for a limit (implementation-defined server error range).
const codeRefused = -32000

// refusedError is a server request refused for a limit. It carries the
// JSON-RPC error the server gets.
type refusedError struct{ rpc *jsonrpc.Error }

func (e *refusedError) Error() string { return e.rpc.Message }
func (e *refusedError) Unwrap() []error {
	return []error{ErrServerRequestRefused, e.rpc}
}

func refused(code int64, format string, args ...any) *refusedError {
	return &refusedError{&jsonrpc.Error{Code: code, Message: fmt.Sprintf(format, args...)}}
}

// acquireInput takes a slot for a request for input (elicitation,
// sampling) of c: one of PerServer for c and one of PerManager. release
// gives them back.
func (c *server) acquireInput(kind string) (release func(), err error) {
	l := c.m.limits()
	m := &c.m.hooks
	m.inputMu.Lock()
	defer m.inputMu.Unlock()
	switch {
	case c.hooks.pendingInput >= l.PerServer:
		return nil, refused(codeRefused, "too many pending requests for input: mcp server %q has %d waiting (the limit is %d); %s refused", c.ID(), c.hooks.pendingInput, l.PerServer, kind)
	case m.pendingInput >= l.PerManager:
		return nil, refused(codeRefused, "too many pending requests for input: %d are waiting across all servers (the limit is %d); %s from mcp server %q refused", m.pendingInput, l.PerManager, kind, c.ID())
	}
	c.hooks.pendingInput++
	m.pendingInput++
	return func() {
		m.inputMu.Lock()
		c.hooks.pendingInput--
		m.pendingInput--
		m.inputMu.Unlock()
	}, nil
}

// checkElicitationSize refuses an elicitation larger than
// MaxElicitationSize.
func (c *server) checkElicitationSize(req *input.ElicitationRequest) error {
	max := c.m.limits().MaxElicitationSize
	if n := req.Size(); n > max {
		return refused(jsonrpc.CodeInvalidParams, "elicitation request from mcp server %q is too large (%d bytes; the limit is %d)", c.ID(), n, max)
	}
	return nil
}

// checkSamplingSize refuses a sampling request larger than
// MaxSamplingSize.
func (c *server) checkSamplingSize(p *mcp.CreateMessageParams) error {
	max := c.m.limits().MaxSamplingSize
	b, err := json.Marshal(p)
	if err != nil {
		return refused(jsonrpc.CodeInvalidParams, "sampling request from mcp server %q cannot be encoded: %v", c.ID(), err)
	}
	if len(b) > max {
		return refused(jsonrpc.CodeInvalidParams, "sampling request from mcp server %q is too large (%d bytes; the limit is %d)", c.ID(), len(b), max)
	}
	return nil
}

// requestGate admits the JSON-RPC requests a server sends on a session, as
// the transport reads them (sessionConn), before go-sdk decodes them:
// those a 2026-07-28 session may not get are dropped, those a legacy
// session may not get yet, or past a size limit, or past PerServer
// requests in flight, are refused at once. Refusals are written by the
// reading goroutine, which paces a flooding server to the speed at which
// it takes our answers. A request admitted is in flight until its handler
// returns and its response is about to be written.
//
// The era comes from what the client writes: a request carrying the
// 2026-07-28 protocol version in its _meta makes the session modern, an
// initialize request starts a legacy handshake, which
// notifications/initialized ends. (A resumed session writes no handshake.)
type requestGate struct {
	c *server

	// mu guards the fields below. It is never held across I/O.
	mu          sync.Mutex
	modern      bool
	handshaking bool // initialize written, notifications/initialized not yet
	inflight    map[jsonrpc.ID]struct{}
	dropped     int // requests dropped unread (2026-07-28 sessions)
}

// written notes a message the client writes.
func (g *requestGate) written(msg jsonrpc.Message) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return
	}
	switch {
	case req.Method == "initialize":
		g.mu.Lock()
		g.modern, g.handshaking = false, true
		g.mu.Unlock()
	case req.Method == "notifications/initialized":
		g.mu.Lock()
		g.handshaking = false
		g.mu.Unlock()
	case req.IsCall() && !g.isModern() && bytes.Contains(req.Params, []byte(mcp.MetaKeyProtocolVersion)):
		// Once modern, a session stays so until a new handshake: every
		// 2026-07-28 call carries the version, and decoding its params
		// again on each call would cost the hot path for nothing.
		var p struct {
			Meta map[string]any `json:"_meta"`
		}
		if json.Unmarshal(req.Params, &p) == nil {
			if v, _ := p.Meta[mcp.MetaKeyProtocolVersion].(string); v >= protocolModern {
				g.mu.Lock()
				g.modern = true
				g.mu.Unlock()
			}
		}
	}
}

// admit decides on a request read from the server. It returns the error
// to answer it with (nil admits it), and drop when it is to be dropped
// unanswered.
func (g *requestGate) admit(req *jsonrpc.Request) (refuse *jsonrpc.Error, drop bool) {
	l := g.c.m.limits()
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.modern:
		g.dropped++
		if g.dropped == 1 || g.dropped%1000 == 0 {
			g.c.m.logger.Warn("mcp server sent a JSON-RPC request on a 2026-07-28 session, where servers send none; dropped", "server", g.c.ID(), "method", logMethod(req.Method), "dropped", g.dropped)
		}
		return nil, true
	case g.handshaking && req.Method != "ping":
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("%s before the session is initialized", logMethod(req.Method))}, false
	}
	if max := l.maxParams(req.Method); len(req.Params) > max {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("%s request too large (%d bytes; the limit is %d)", logMethod(req.Method), len(req.Params), max)}, false
	}
	if _, dup := g.inflight[req.ID]; dup {
		return nil, false // go-sdk refuses a duplicate id itself
	}
	if len(g.inflight) >= l.PerServer {
		return &jsonrpc.Error{Code: codeRefused, Message: fmt.Sprintf("too many requests in flight (the limit is %d); %s refused", l.PerServer, logMethod(req.Method))}, false
	}
	if g.inflight == nil {
		g.inflight = map[jsonrpc.ID]struct{}{}
	}
	g.inflight[req.ID] = struct{}{}
	return nil, false
}

// answered notes that the response to a request has been written.
func (g *requestGate) answered(id jsonrpc.ID) {
	g.mu.Lock()
	delete(g.inflight, id)
	g.mu.Unlock()
}

// isModern reports whether the session is a 2026-07-28 one.
func (g *requestGate) isModern() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.modern
}

// logMethod is a method name fit for logs and errors: a known one, or a
// placeholder (the name comes from the server).
func logMethod(method string) string {
	switch method {
	case "elicitation/create", "sampling/createMessage", "roots/list", "ping":
		return method
	}
	if strings.HasPrefix(method, "notifications/") {
		return "notification"
	}
	return "unknown method"
}

// requestLimitMiddleware applies, for transports whose connection the
// Manager cannot see (go-sdk's own streamable transport), the rules the
// requestGate applies as messages are read: no requests on 2026-07-28
// sessions, params sizes, PerServer requests in flight (the handlers,
// elicit and createMessage, check sizes again by their own measure). With the Manager's transports it never
// refuses anything the gate let through.
func (h *sessionHooks) requestLimitMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if strings.HasPrefix(method, "notifications/") {
			return next(ctx, method, req)
		}
		modern := false
		if pc, ok := h.s.conn.(*sessionConn); ok {
			modern = pc.gate.isModern() // and the gate dropped the request
		} else {
			modern = isModern(req)
		}
		if modern {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "a 2026-07-28 server sends no requests to the client"}
		}
		// Too large first, as the gate does: a request refused for its size
		// is refused so whatever else is in flight.
		l := h.c.m.limits()
		if b, err := json.Marshal(req.GetParams()); err == nil {
			if maxSize := l.maxParams(method); len(b) > maxSize {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("%s request too large (%d bytes; the limit is %d)", logMethod(method), len(b), maxSize)}
			}
		}
		max := l.PerServer
		h.mu.Lock()
		if h.inflight >= max {
			h.mu.Unlock()
			return nil, &jsonrpc.Error{Code: codeRefused, Message: fmt.Sprintf("too many requests in flight (the limit is %d); %s refused", max, logMethod(method))}
		}
		h.inflight++
		h.mu.Unlock()
		defer func() {
			h.mu.Lock()
			h.inflight--
			h.mu.Unlock()
		}()
		return next(ctx, method, req)
	}
}
