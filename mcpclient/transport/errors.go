package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"

	"github.com/agentmcp/agentmcp/internal/safetext"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Sentinel errors. Match them with errors.Is.
var (
	// ErrUnauthorized is wrapped by every error that means the server
	// refused the request for lack of (valid) credentials: HTTP 401, or 403
	// with an OAuth error.
	ErrUnauthorized = errors.New("unauthorized")

	// ErrTransportNotImplemented is wrapped by every error that means the
	// endpoint does not implement the transport that was tried (HTTP 404 or
	// 405 on the handshake). Under TransportAuto it triggers the fallback
	// from streamable HTTP to SSE, as any other 4xx without a JSON-RPC error
	// does, except 401, 403 and 429.
	ErrTransportNotImplemented = errors.New("transport not implemented")

	// ErrSessionExpired is wrapped when the server no longer knows the
	// session: HTTP 404 to a request with a session id, 400 or 410 whose
	// message names the session, or any 4xx to the first requests of a
	// resumed session but 401, 429 and a 403 that asks for authorisation
	// (a Bearer error): a plain 403 there is a server that does not know
	// the session. It also wraps mcp.ErrSessionMissing. The connection is
	// over: a client starts a new session (mcpclient's Manager does so
	// once, transparently, and repeats the request if that is safe).
	ErrSessionExpired = errors.New("mcp session expired")

	// ErrProtocol is wrapped by errors caused by a peer that broke the
	// protocol: malformed JSON, a message over the size limit, an SSE stream
	// without an endpoint event, too many pages.
	ErrProtocol = errors.New("mcp protocol error")
)

// HTTPError is an HTTP response with a status the client could not use.
type HTTPError struct {
	// Method and URL describe the request. URL carries no query or userinfo.
	Method string
	URL    string
	// StatusCode is the HTTP status code, Status its text.
	StatusCode int
	Status     string
	// WWWAuthenticate holds the WWW-Authenticate header values of a 401 or
	// 403, which an OAuth provider needs to start discovery.
	WWWAuthenticate []string
	// JSONRPC is the JSON-RPC error the body carried, if any. A 404 or 405
	// with a JSON-RPC error comes from a server that does implement the
	// transport (a 2026-07-28 server answers an unknown method that way).
	JSONRPC *jsonrpc.Error
	// Body is the start of the response body, sanitised for display, when
	// it is not a JSON-RPC error; it is empty for an HTML page, which is
	// markup rather than a message.
	Body string
}

func (e *HTTPError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: %d %s", e.Method, e.URL, e.StatusCode, http.StatusText(e.StatusCode))
	switch {
	case e.JSONRPC != nil:
		fmt.Fprintf(&b, ": %s (%d)", safetext.Sanitize(e.JSONRPC.Message, 200), e.JSONRPC.Code)
	case e.Body != "":
		fmt.Fprintf(&b, ": %s", e.Body)
	}
	return b.String()
}

// Is makes errors.Is(err, ErrUnauthorized) and
// errors.Is(err, ErrTransportNotImplemented) true for the matching statuses.
func (e *HTTPError) Is(target error) bool {
	switch target {
	case ErrUnauthorized:
		return e.StatusCode == http.StatusUnauthorized ||
			(e.StatusCode == http.StatusForbidden && bearerError(e.WWWAuthenticate) != "")
	case ErrTransportNotImplemented:
		return e.JSONRPC == nil &&
			(e.StatusCode == http.StatusNotFound || e.StatusCode == http.StatusMethodNotAllowed)
	}
	return false
}

// bearerError returns the error parameter of a Bearer challenge, if any:
// a 403 only means "authorise again" when it carries one
// (insufficient_scope, invalid_token).
func bearerError(challenges []string) string {
	for _, c := range challenges {
		lc := strings.ToLower(c)
		i := strings.Index(lc, "error=")
		if !strings.HasPrefix(strings.TrimSpace(lc), "bearer") || i < 0 {
			continue
		}
		v := c[i+len("error="):]
		v = strings.TrimPrefix(v, `"`)
		if j := strings.IndexAny(v, `",`); j >= 0 {
			v = v[:j]
		}
		return v
	}
	return ""
}

// errRejected marks a Write error as concerning one request only. go-sdk's
// JSON-RPC layer breaks the whole connection on any other Write error; its
// sentinel for "rejected by transport" is internal, but JSON-RPC errors
// compare by code, so an error with the same code matches it.
var errRejected = &jsonrpc.Error{Code: -32005, Message: "rejected by transport"}

// rejected wraps err so that it fails one request without breaking the
// connection. The message is err's own.
func rejected(err error) error { return rejectedError{err} }

type rejectedError struct{ err error }

func (e rejectedError) Error() string { return e.err.Error() }
func (e rejectedError) Unwrap() error { return e.err }

// Is matches go-sdk's sentinel (by its code, as JSON-RPC errors compare)
// without being one in the chain: errors.As for a *jsonrpc.Error finds
// only what a server sent, never this mark.
func (e rejectedError) Is(target error) bool {
	w, ok := target.(*jsonrpc.Error)
	return ok && w != nil && w.Code == errRejected.Code
}

// protocolError wraps err with ErrProtocol.
func protocolError(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrProtocol, fmt.Sprintf(format, args...))
}

// IsUnreachable reports whether err means the server could not be reached
// at all: refused, reset, timed out, a name that does not resolve, a
// connection closed before any answer. An HTTP status or a JSON-RPC error
// came from a live server, and is not that.
func IsUnreachable(err error) bool {
	if err == nil {
		return false
	}
	var herr *HTTPError
	if errors.As(err, &herr) || errors.Is(err, ErrProtocol) {
		return false
	}
	var (
		uerr *url.Error
		nerr *net.OpError
		derr *net.DNSError
	)
	return errors.As(err, &uerr) || errors.As(err, &nerr) || errors.As(err, &derr) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, os.ErrDeadlineExceeded) ||
		errors.Is(err, context.DeadlineExceeded)
}

// counterOf returns c, or a Counter that counts nothing.
func counterOf(c Counter) Counter {
	if c == nil {
		return noCounter{}
	}
	return c
}

type noCounter struct{}

func (noCounter) Sent(int)     {}
func (noCounter) Received(int) {}

// loggerOf returns l, or a logger that discards everything.
func loggerOf(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}
