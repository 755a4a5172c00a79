package mcpclient

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/agentmcp/agentmcp/internal/protocol"
	"github.com/agentmcp/agentmcp/mcpclient/internal/gate"
	"github.com/agentmcp/agentmcp/mcpclient/transport"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Sentinel errors. Match them with errors.Is.
var (
	// ErrNotRegistered is returned for a server id the Manager does not know.
	ErrNotRegistered = errors.New("mcp server is not registered")

	// ErrNotConnected is returned by calls on a server that has no live
	// session (it is connecting, authenticating, failed, or closed).
	ErrNotConnected = errors.New("mcp server is not connected")

	// ErrClosed is returned by every method of a Manager after Close.
	ErrClosed = errors.New("mcp client manager is closed")

	// ErrCallInterrupted is wrapped by [*InterruptedCallError].
	ErrCallInterrupted = errors.New("mcp call interrupted; it may or may not have run")

	// ErrGateClosed is wrapped by the error of a request that Options.Gate
	// stopped before it was sent.
	ErrGateClosed = gate.ErrClosed
)

// The errors of the HTTP transports, which mcpclient returns as they are
// (package transport documents them).
var (
	// ErrUnauthorized is wrapped by every error that means the server
	// refused the request for lack of (valid) credentials: HTTP 401, or 403
	// with an OAuth error.
	ErrUnauthorized = transport.ErrUnauthorized

	// ErrTransportNotImplemented is wrapped by every error that means the
	// endpoint does not implement the transport that was tried (HTTP 404 or
	// 405 on the handshake). Under TransportAuto it triggers the fallback
	// from streamable HTTP to SSE, as any other 4xx without a JSON-RPC error
	// does, except 401, 403 and 429.
	ErrTransportNotImplemented = transport.ErrTransportNotImplemented

	// ErrSessionExpired is wrapped when the server no longer knows the
	// session (see transport.ErrSessionExpired). The Manager re-initialises
	// the session once, transparently, and repeats the request if that is
	// safe.
	ErrSessionExpired = transport.ErrSessionExpired

	// ErrProtocol is wrapped by errors caused by a peer that broke the
	// protocol: malformed JSON, a message over the size limit, an SSE stream
	// without an endpoint event, too many pages.
	ErrProtocol = transport.ErrProtocol
)

// HTTPError is an HTTP response with a status the client could not use
// (see transport.HTTPError).
type HTTPError = transport.HTTPError

// InterruptedCallError reports a request that was in flight, or sent, while
// the session was lost, and that was not repeated because repeating it might
// have an effect twice: a tool call whose tool is not annotated
// readOnlyHint or idempotentHint. The call may or may not have run.
type InterruptedCallError struct {
	ServerID string
	Method   string // "tools/call"
	Name     string // the tool name
	Err      error  // what interrupted it
}

func (e *InterruptedCallError) Error() string {
	return fmt.Sprintf("%s %q on server %q was interrupted (%v); it may or may not have run, and it was not repeated because it is not marked read-only or idempotent",
		e.Method, e.Name, e.ServerID, e.Err)
}

func (e *InterruptedCallError) Unwrap() []error { return []error{ErrCallInterrupted, e.Err} }

// IsUnauthorized reports whether err means the server wants (new)
// credentials. It is the Go counterpart of the seed's isUnauthorized, but it
// matches typed errors only, never substrings of messages.
func IsUnauthorized(err error) bool { return errors.Is(err, ErrUnauthorized) }

// IsTransportNotImplemented reports whether err means the endpoint does not
// implement the transport that was tried (HTTP 404 or 405). A 404 for a
// session the server forgot is not that.
func IsTransportNotImplemented(err error) bool {
	return errors.Is(err, ErrTransportNotImplemented) && !errors.Is(err, ErrSessionExpired)
}

// triesOtherTransport reports whether a handshake that failed with err
// lets TransportAuto try the other HTTP transport: the endpoint answered
// with a 4xx that carries no JSON-RPC error (the spec names 404 and 405;
// go-sdk's SSE server answers the streamable initialize POST with 400),
// other than 401 and 403 (authorisation) and 429 (rate limiting), and not
// for a session it forgot.
func triesOtherTransport(err error) bool {
	var herr *HTTPError
	if errors.Is(err, ErrSessionExpired) || !errors.As(err, &herr) || herr.JSONRPC != nil {
		return false
	}
	switch code := herr.StatusCode; code {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusTooManyRequests:
		return false
	default:
		return code >= 400 && code < 500
	}
}

// isSessionLost reports whether err means the session is gone and a new
// handshake is needed.
func isSessionLost(err error) bool {
	return errors.Is(err, ErrSessionExpired) || errors.Is(err, mcp.ErrSessionMissing) ||
		errors.Is(err, mcp.ErrConnectionClosed)
}

// The protocol versions that mark the eras.
const (
	protocolModern = protocol.Stateless
	protocolLegacy = protocol.LatestSession
)
