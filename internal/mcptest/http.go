package mcptest

import (
	"errors"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Mode is how an HTTPServer serves MCP.
type Mode int

const (
	// Stateful serves streamable HTTP with sessions: the legacy era
	// (2025-11-25). go-sdk's stateful handler does not offer 2026-07-28.
	Stateful Mode = iota
	// Stateless serves streamable HTTP without sessions, in which go-sdk
	// speaks 2026-07-28 (and the legacy era to clients that ask for it).
	Stateless
	// SSE serves only the 2024-11-05 HTTP+SSE transport: GET opens the
	// event stream; a POST without a session is 405, as on servers whose
	// message endpoint is elsewhere.
	SSE
)

// HTTPServer hosts an MCP server on 127.0.0.1.
type HTTPServer struct {
	URL string

	t       testing.TB
	addr    string
	handler http.Handler

	// Requests counts every HTTP request received.
	Requests atomic.Int64

	mu    sync.Mutex
	srv   *http.Server
	fault int // status to answer every request with, or 0
}

// Serve hosts the server returned by newServer (called for each request
// or session, as go-sdk's handlers do) on a fresh 127.0.0.1 port, and
// stops it when the test ends.
func Serve(t testing.TB, mode Mode, newServer func() *mcp.Server) *HTTPServer {
	t.Helper()
	return ServeHandler(t, Handler(mode, newServer))
}

// ServeHandler hosts h on a fresh 127.0.0.1 port, at path /mcp.
func ServeHandler(t testing.TB, h http.Handler) *HTTPServer {
	t.Helper()
	s := &HTTPServer{t: t, handler: h}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.addr = l.Addr().String()
	s.URL = "http://" + s.addr + "/mcp"
	s.start(l)
	t.Cleanup(s.Stop)
	return s
}

func (s *HTTPServer) start(l net.Listener) {
	srv := &http.Server{Handler: http.HandlerFunc(s.serve)}
	s.mu.Lock()
	s.srv = srv
	s.mu.Unlock()
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.t.Errorf("mcptest: serve: %v", err)
		}
	}()
}

func (s *HTTPServer) serve(w http.ResponseWriter, r *http.Request) {
	s.Requests.Add(1)
	s.mu.Lock()
	fault := s.fault
	s.mu.Unlock()
	if fault != 0 {
		if fault == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://`+s.addr+`/.well-known/oauth-protected-resource"`)
		}
		http.Error(w, http.StatusText(fault), fault)
		return
	}
	if r.URL.Path != "/mcp" {
		http.NotFound(w, r)
		return
	}
	s.handler.ServeHTTP(w, r)
}

// SetFault makes every request get status (0 restores normal service).
func (s *HTTPServer) SetFault(status int) {
	s.mu.Lock()
	s.fault = status
	s.mu.Unlock()
}

// Stop closes the listener and every connection, as a killed process
// would. It is idempotent.
func (s *HTTPServer) Stop() {
	s.mu.Lock()
	srv := s.srv
	s.srv = nil
	s.mu.Unlock()
	if srv != nil {
		srv.Close()
	}
}

// Restart stops the server if needed and serves again on the same port,
// with handler h (a new server process knows no old sessions).
func (s *HTTPServer) Restart(h http.Handler) {
	s.t.Helper()
	s.Stop()
	l, err := net.Listen("tcp", s.addr)
	if err != nil {
		s.t.Fatalf("mcptest: listening again on %s: %v", s.addr, err)
	}
	s.handler = h
	s.start(l)
}

// Handler returns a handler serving the servers newServer returns in mode.
func Handler(mode Mode, newServer func() *mcp.Server) http.Handler {
	get := func(*http.Request) *mcp.Server { return newServer() }
	switch mode {
	case Stateless:
		return mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{Stateless: true, PropagateRequestCancellation: true})
	case SSE:
		sse := mcp.NewSSEHandler(get, nil)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost && r.URL.Query().Get("sessionid") == "" {
				w.Header().Set("Allow", "GET")
				http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
				return
			}
			sse.ServeHTTP(w, r)
		})
	default:
		return mcp.NewStreamableHTTPHandler(get, nil)
	}
}
