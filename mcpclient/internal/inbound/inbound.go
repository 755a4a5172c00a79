//lint:file-ignore SA1019 roots, sampling and logging are deprecated from 2026-07-28 on (SEP-2577); agentmcp speaks the earlier eras too, which have them

// Package inbound admits the requests MCP servers send to package
// mcpclient's Manager (elicitation, sampling, roots/list, ping) and bounds
// what they can make it hold: the rules of mcpclient.ServerRequestLimits.
//
// # Usage
//
// A [Gate] sits on a session's connection: it sees every message the
// client writes ([Gate.Written], [Gate.Answered]) and decides on every
// request read from the server before go-sdk decodes it ([Gate.Admit]).
// For a connection the Manager cannot see (go-sdk's own transport),
// [Middleware] applies the same rules as a receiving middleware. Requests
// for input take a slot of [Inputs] while they wait for their answer, and
// their size is checked by [CheckElicitation] and [CheckSampling].
//
// # Concurrency
//
// Gate, Inputs and the middleware are safe for concurrent use; a
// ServerInputs is guarded by the Inputs it is used with.
//
// # Errors
//
// A request refused for a limit is answered with a JSON-RPC error; the
// error a handler returns for it is a [*RefusedError], which wraps
// [ErrRefused] and the JSON-RPC error the server gets.
package inbound

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/agentmcp/agentmcp/mcpclient/input"
	"github.com/agentmcp/agentmcp/mcpclient/transport"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Limits are the limits of mcpclient.ServerRequestLimits, which documents
// them; a field zero or less means its default.
type Limits struct {
	PerServer          int
	PerManager         int
	MaxElicitationSize int
	MaxSamplingSize    int
}

// Default limits.
const (
	defaultRequestsPerServer  = 4
	defaultRequestsPerManager = 16
	defaultMaxElicitationSize = 64 << 10
	defaultMaxSamplingSize    = 1 << 20
	// maxOtherRequestSize caps the params of ping, roots/list and any
	// other request: they need none to speak of.
	maxOtherRequestSize = 4 << 10
)

// WithDefaults returns l with its zero fields filled in.
func (l Limits) WithDefaults() Limits {
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
func (l Limits) maxParams(method string) int {
	switch method {
	case "elicitation/create":
		return l.MaxElicitationSize
	case "sampling/createMessage":
		return l.MaxSamplingSize
	}
	return maxOtherRequestSize
}

// ErrRefused is wrapped by the error of a request refused for a limit.
var ErrRefused = errors.New("mcp server request refused")

// codeRefused is the JSON-RPC error code a server gets for a request
// refused for a limit (implementation-defined server error range).
const codeRefused = -32000

// RefusedError is a server request refused for a limit. It carries the
// JSON-RPC error the server gets.
type RefusedError struct{ rpc *jsonrpc.Error }

func (e *RefusedError) Error() string { return e.rpc.Message }

// Unwrap returns ErrRefused and the JSON-RPC error.
func (e *RefusedError) Unwrap() []error { return []error{ErrRefused, e.rpc} }

func refused(code int64, format string, args ...any) *RefusedError {
	return &RefusedError{&jsonrpc.Error{Code: code, Message: fmt.Sprintf(format, args...)}}
}

// Inputs counts the requests for input (elicitation, sampling) waiting for
// their answer, across a Manager's servers.
type Inputs struct {
	// mu guards pending and every ServerInputs used with it.
	mu      sync.Mutex
	pending int
}

// ServerInputs is one server's part of Inputs. Its zero value is ready to
// use.
type ServerInputs struct {
	pending int // guarded by Inputs.mu
}

// Acquire takes a slot for a request for input (kind: "elicitation",
// "sampling") of the server serverID: one of l.PerServer in srv and one of
// l.PerManager in in. release gives them back.
func (in *Inputs) Acquire(srv *ServerInputs, l Limits, serverID, kind string) (release func(), err error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	switch {
	case srv.pending >= l.PerServer:
		return nil, refused(codeRefused, "too many pending requests for input: mcp server %q has %d waiting (the limit is %d); %s refused", serverID, srv.pending, l.PerServer, kind)
	case in.pending >= l.PerManager:
		return nil, refused(codeRefused, "too many pending requests for input: %d are waiting across all servers (the limit is %d); %s from mcp server %q refused", in.pending, l.PerManager, kind, serverID)
	}
	srv.pending++
	in.pending++
	return func() {
		in.mu.Lock()
		srv.pending--
		in.pending--
		in.mu.Unlock()
	}, nil
}

// Pending returns the number of requests for input waiting.
func (in *Inputs) Pending() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.pending
}

// CheckElicitation refuses an elicitation of the server serverID larger
// than l.MaxElicitationSize.
func CheckElicitation(l Limits, serverID string, req *input.ElicitationRequest) error {
	if n := req.Size(); n > l.MaxElicitationSize {
		return refused(jsonrpc.CodeInvalidParams, "elicitation request from mcp server %q is too large (%d bytes; the limit is %d)", serverID, n, l.MaxElicitationSize)
	}
	return nil
}

// CheckSampling refuses a sampling request of the server serverID larger
// than l.MaxSamplingSize.
func CheckSampling(l Limits, serverID string, p *mcp.CreateMessageParams) error {
	b, err := json.Marshal(p)
	if err != nil {
		return refused(jsonrpc.CodeInvalidParams, "sampling request from mcp server %q cannot be encoded: %v", serverID, err)
	}
	if len(b) > l.MaxSamplingSize {
		return refused(jsonrpc.CodeInvalidParams, "sampling request from mcp server %q is too large (%d bytes; the limit is %d)", serverID, len(b), l.MaxSamplingSize)
	}
	return nil
}

// Gate admits the JSON-RPC requests a server sends on a session, as the
// transport reads them, before go-sdk decodes them: those a 2026-07-28
// session may not get are dropped, those a legacy session may not get yet,
// or past a size limit, or past PerServer requests in flight, are refused
// at once. Refusals are written by the reading goroutine, which paces a
// flooding server to the speed at which it takes our answers. A request
// admitted is in flight until its handler returns and its response is
// about to be written.
//
// The era comes from what the client writes: a request carrying the
// 2026-07-28 protocol version in its _meta makes the session modern, an
// initialize request starts a legacy handshake, which
// notifications/initialized ends. (A resumed session writes no handshake.)
type Gate struct {
	limits   Limits
	logger   *slog.Logger
	serverID func() string

	// mu guards the fields below. It is never held across I/O.
	mu          sync.Mutex
	modern      bool
	handshaking bool // initialize written, notifications/initialized not yet
	inflight    map[jsonrpc.ID]struct{}
	dropped     int // requests dropped unread (2026-07-28 sessions)
}

// NewGate returns the gate of a new session of the server whose id
// serverID returns, under l (with its defaults). Requests dropped are
// logged to logger.
func NewGate(l Limits, logger *slog.Logger, serverID func() string) *Gate {
	return &Gate{limits: l.WithDefaults(), logger: logger, serverID: serverID}
}

// Written notes a message the client writes.
func (g *Gate) Written(msg jsonrpc.Message) {
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
	case req.IsCall() && !g.Modern() && bytes.Contains(req.Params, []byte(mcp.MetaKeyProtocolVersion)):
		// Once modern, a session stays so until a new handshake: every
		// 2026-07-28 call carries the version, and decoding its params
		// again on each call would cost the hot path for nothing.
		var p struct {
			Meta map[string]any `json:"_meta"`
		}
		if json.Unmarshal(req.Params, &p) == nil {
			if v, _ := p.Meta[mcp.MetaKeyProtocolVersion].(string); v >= transport.ProtocolModern {
				g.mu.Lock()
				g.modern = true
				g.mu.Unlock()
			}
		}
	}
}

// Admit decides on a request read from the server. It returns the error
// to answer it with (nil admits it), and drop when it is to be dropped
// unanswered.
func (g *Gate) Admit(req *jsonrpc.Request) (refuse *jsonrpc.Error, drop bool) {
	l := g.limits
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.modern:
		g.dropped++
		if g.dropped == 1 || g.dropped%1000 == 0 {
			g.logger.Warn("mcp server sent a JSON-RPC request on a 2026-07-28 session, where servers send none; dropped", "server", g.serverID(), "method", logMethod(req.Method), "dropped", g.dropped)
		}
		return nil, true
	case g.handshaking && req.Method != "ping":
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("%s before the session is initialized", logMethod(req.Method))}, false
	}
	if max := l.maxParams(req.Method); len(req.Params) > max {
		return tooLarge(req.Method, len(req.Params), max), false
	}
	if _, dup := g.inflight[req.ID]; dup {
		return nil, false // go-sdk refuses a duplicate id itself
	}
	if len(g.inflight) >= l.PerServer {
		return tooMany(req.Method, l.PerServer), false
	}
	if g.inflight == nil {
		g.inflight = map[jsonrpc.ID]struct{}{}
	}
	g.inflight[req.ID] = struct{}{}
	return nil, false
}

func tooLarge(method string, n, max int) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("%s request too large (%d bytes; the limit is %d)", logMethod(method), n, max)}
}

func tooMany(method string, max int) *jsonrpc.Error {
	return &jsonrpc.Error{Code: codeRefused, Message: fmt.Sprintf("too many requests in flight (the limit is %d); %s refused", max, logMethod(method))}
}

// Answered notes that the response to a request is about to be written.
func (g *Gate) Answered(id jsonrpc.ID) {
	g.mu.Lock()
	delete(g.inflight, id)
	g.mu.Unlock()
}

// Modern reports whether the session is a 2026-07-28 one.
func (g *Gate) Modern() bool {
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

// Middleware applies, as the receiving middleware of one session whose
// connection no Gate sees (go-sdk's own streamable transport), the rules
// a Gate applies as messages are read: no requests on 2026-07-28 sessions
// (modern tells), params sizes, l.PerServer requests in flight. (The
// handlers check the sizes of requests for input again by their own
// measure.) Behind a Gate it never refuses anything the gate let through.
func Middleware(l Limits, modern func(mcp.Request) bool) mcp.Middleware {
	l = l.WithDefaults()
	var (
		mu       sync.Mutex
		inflight int // requests being answered
	)
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if strings.HasPrefix(method, "notifications/") {
				return next(ctx, method, req)
			}
			if modern(req) {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "a 2026-07-28 server sends no requests to the client"}
			}
			// Too large first, as the gate does: a request refused for its
			// size is refused so whatever else is in flight.
			if b, err := json.Marshal(req.GetParams()); err == nil {
				if max := l.maxParams(method); len(b) > max {
					return nil, tooLarge(method, len(b), max)
				}
			}
			mu.Lock()
			if inflight >= l.PerServer {
				mu.Unlock()
				return nil, tooMany(method, l.PerServer)
			}
			inflight++
			mu.Unlock()
			defer func() {
				mu.Lock()
				inflight--
				mu.Unlock()
			}()
			return next(ctx, method, req)
		}
	}
}
