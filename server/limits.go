package server

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/agentmcp/agentmcp/api"
)

// The defaults of the connection and request limits (Options).
const (
	defaultHeaderTimeout = 10 * time.Second
	defaultBodyTimeout   = 30 * time.Second
	defaultWriteTimeout  = 60 * time.Second
	defaultIdleTimeout   = 60 * time.Second
	// maxHeaderBytes caps a request's header (net/http's default is 1 MiB).
	maxHeaderBytes = 64 << 10
)

// HTTPServer returns an http.Server that serves s on the connections it
// accepts, with the connection limits of Options: a request's headers must
// arrive within HeaderTimeout, at most 64 KiB of them; a keep-alive
// connection idle for IdleTimeout is closed. It sets no ReadTimeout or
// WriteTimeout, which would cut the WebSocket and SSE streams: s bounds
// each request's body and each response's writing itself (BodyTimeout,
// WriteTimeout), and the streams by their pings (KeepAlive). It registers
// s.CloseStreams to run on Shutdown. The caller may set other fields
// (ErrorLog, TLSConfig) before serving.
func (s *Server) HTTPServer() *http.Server {
	hs := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: s.opts.HeaderTimeout,
		IdleTimeout:       s.opts.IdleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
	}
	hs.RegisterOnShutdown(s.CloseStreams)
	return hs
}

// The stream routes: their responses last as long as the client stays,
// and their own pings bound them (see stream.go).
const (
	agentRootRoute = "/agents/{class}/{name}" // a WebSocket when upgraded
	eventsRoute    = "/agents/{class}/{name}/events"
)

// isStream reports whether r, matched to pattern, opens a stream.
func isStream(pattern string, r *http.Request) bool {
	switch pattern {
	case eventsRoute, mcpRoute:
		// An MCP response is a stream (server-sent events) as long as a
		// call or a session's GET lasts.
		return true
	case agentRootRoute:
		return httpguts.HeaderValuesContainsToken(r.Header["Upgrade"], "websocket")
	}
	return false
}

// bodyLimit is the largest body a request may carry: a JSON document on
// the API's POST routes (and the PUT of exposureRoute), an MCP message on
// mcpRoute; anywhere else a body is not read (readBody).
func bodyLimit(protected bool, pattern string, r *http.Request) int64 {
	switch {
	case !protected:
		return 0
	case r.Method == http.MethodPut && (pattern == exposureRoute || pattern == policyRoute):
		return maxBody
	case r.Method != http.MethodPost:
		return 0
	case pattern == mcpRoute:
		return maxMCPBody
	}
	return maxBody
}

// hasBody reports whether r comes with a body to read.
func hasBody(r *http.Request) bool { return r.Body != nil && r.Body != http.NoBody }

// refuse answers a request that is refused before its body is read
// whole. The rest of the body is abandoned: the connection is closed after
// the answer, and its read deadline set to now, because net/http would
// otherwise read up to 256 KiB of what is left before closing (a client
// trickling it would hold the connection).
func refuse(w http.ResponseWriter, r *http.Request, e *api.APIError) {
	abandonBody(w, r)
	writeError(w, e)
}

// abandonBody gives up r's body, if it has one: it is not read, and the
// connection is closed after the answer.
func abandonBody(w http.ResponseWriter, r *http.Request) {
	if hasBody(r) {
		w.Header().Set("Connection", "close")
		http.NewResponseController(w).SetReadDeadline(time.Now())
	}
}

// readBody reads r's body, at most limit bytes, within timeout, and gives
// it back to r in memory: the handlers never wait for a client's body,
// and a request that was refused never reaches them. The read deadline
// is lifted once the body is in, so that it cannot cut the handler's work
// (net/http lifts it too when it starts watching for the client going
// away).
func readBody(w http.ResponseWriter, r *http.Request, limit int64, timeout time.Duration) *api.APIError {
	if !hasBody(r) {
		return nil
	}
	if limit == 0 {
		// A route that takes no body answers as it would without one (a
		// wrong method still gets 405), and the body is never read.
		abandonBody(w, r)
		r.Body, r.ContentLength = http.NoBody, 0
		return nil
	}
	if r.ContentLength > limit {
		return apiErrorf(http.StatusRequestEntityTooLarge, api.CodeBodyTooLarge, "the body is larger than %d bytes", limit)
	}
	rc := http.NewResponseController(w)
	if timeout > 0 {
		rc.SetReadDeadline(time.Now().Add(timeout))
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if timeout > 0 {
		rc.SetReadDeadline(time.Time{})
	}
	var (
		tooLarge *http.MaxBytesError
		ne       net.Error
	)
	switch {
	case err == nil:
	case errors.As(err, &tooLarge):
		return apiErrorf(http.StatusRequestEntityTooLarge, api.CodeBodyTooLarge, "the body is larger than %d bytes", limit)
	case errors.As(err, &ne) && ne.Timeout():
		return apiErrorf(http.StatusRequestTimeout, api.CodeRequestTimeout, "the body did not arrive within %v", timeout)
	default:
		return apiErrorf(http.StatusBadRequest, api.CodeInvalidRequest, "reading the body: the connection failed")
	}
	r.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader(data))
	r.ContentLength = int64(len(data))
	return nil
}

// deadlineWriter bounds the writing of a response: the connection's write
// deadline is set when the response starts, so that a handler that works
// for long before it answers (a tool call) is not cut, and a client that
// does not read its answer does not hold the handler forever.
type deadlineWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	started bool
}

func newDeadlineWriter(w http.ResponseWriter, timeout time.Duration) http.ResponseWriter {
	if timeout <= 0 {
		return w
	}
	return &deadlineWriter{ResponseWriter: w, rc: http.NewResponseController(w), timeout: timeout}
}

func (w *deadlineWriter) start() {
	if !w.started {
		w.started = true
		w.rc.SetWriteDeadline(time.Now().Add(w.timeout))
	}
}

func (w *deadlineWriter) WriteHeader(status int) {
	w.start()
	w.ResponseWriter.WriteHeader(status)
}

func (w *deadlineWriter) Write(b []byte) (int, error) {
	w.start()
	return w.ResponseWriter.Write(b)
}

// Unwrap gives http.ResponseController the connection's writer.
func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
