package mcptest

import (
	"context"
	"errors"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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

	// newHandler builds the handler of a restarted server, for Serve.
	newHandler func() http.Handler

	mu       sync.Mutex
	servers  []*mcp.Server // every server handed to the handler, for Stop
	stop     stopper       // ends the handlers at Stop
	srv      *http.Server
	fault    int             // status to answer every request with, or 0
	sessions map[string]bool // session ids handed out; true once expired
	ended    []string        // session ids the client ended (DELETE answered 2xx)
	handling handling        // the requests being handled
}

// Serve hosts the server returned by newServer (called for each request
// or session, as go-sdk's handlers do) on a fresh 127.0.0.1 port, and
// stops it when the test ends.
func Serve(t testing.TB, mode Mode, newServer func() *mcp.Server) *HTTPServer {
	t.Helper()
	s := &HTTPServer{t: t}
	record := func() *mcp.Server {
		srv := newServer()
		s.stop.install(srv)
		s.mu.Lock()
		if !slices.Contains(s.servers, srv) {
			s.servers = append(s.servers, srv)
		}
		s.mu.Unlock()
		return srv
	}
	s.handler = handler(mode, record)
	s.newHandler = func() http.Handler { return handler(mode, record) }
	s.listen()
	return s
}

// ServeHandler hosts h on a fresh 127.0.0.1 port, at path /mcp.
func ServeHandler(t testing.TB, h http.Handler) *HTTPServer {
	t.Helper()
	s := &HTTPServer{t: t, handler: h}
	s.listen()
	return s
}

// listen starts serving on a fresh port, until the test ends.
func (s *HTTPServer) listen() {
	s.t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		s.t.Fatal(err)
	}
	s.addr = l.Addr().String()
	s.URL = "http://" + s.addr + "/mcp"
	s.start(l)
	s.t.Cleanup(s.Stop)
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
	defer s.handling.enter()()
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
	if id := r.Header.Get("Mcp-Session-Id"); id != "" {
		s.mu.Lock()
		expired := s.sessions[id]
		s.mu.Unlock()
		if expired {
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
	}
	rec := &sessionRecorder{ResponseWriter: w, s: s}
	s.handler.ServeHTTP(rec, r)
	if id := r.Header.Get("Mcp-Session-Id"); r.Method == http.MethodDelete && id != "" && rec.code/100 == 2 {
		s.mu.Lock()
		s.ended = append(s.ended, id)
		s.mu.Unlock()
	}
}

// sessionRecorder notes the session ids the handler hands out, and the
// status of its answer.
type sessionRecorder struct {
	http.ResponseWriter
	s    *HTTPServer
	code int
}

func (r *sessionRecorder) WriteHeader(code int) {
	r.note()
	if r.code == 0 {
		r.code = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *sessionRecorder) Write(b []byte) (int, error) {
	r.note()
	if r.code == 0 {
		r.code = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

func (r *sessionRecorder) note() {
	if id := r.Header().Get("Mcp-Session-Id"); id != "" {
		r.s.mu.Lock()
		if r.s.sessions == nil {
			r.s.sessions = map[string]bool{}
		}
		if _, ok := r.s.sessions[id]; !ok {
			r.s.sessions[id] = false
		}
		r.s.mu.Unlock()
	}
}

func (r *sessionRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (r *sessionRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// Sessions returns the session ids handed out so far, sorted, and those
// that a client ended with a DELETE the server accepted, in the order they
// ended.
func (s *HTTPServer) Sessions() (all, ended []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id := range s.sessions {
		all = append(all, id)
	}
	slices.Sort(all)
	return all, slices.Clone(s.ended)
}

// ExpireSessions makes every session handed out so far unknown: requests
// that carry one get 404, as from a replica that never knew it or a server
// that expired it. Streams already open stay open.
func (s *HTTPServer) ExpireSessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id := range s.sessions {
		s.sessions[id] = true
	}
	return len(s.sessions)
}

// SetFault makes every request get status (0 restores normal service).
func (s *HTTPServer) SetFault(status int) {
	s.mu.Lock()
	s.fault = status
	s.mu.Unlock()
}

// Stop closes the listener, every connection and every session, as a
// killed process would: the handlers in flight are cancelled, and their
// requests to the client fail, so that closing the sessions (which waits
// for them) ends. It is idempotent.
func (s *HTTPServer) Stop() {
	s.mu.Lock()
	srv := s.srv
	s.srv = nil
	s.mu.Unlock()
	if srv != nil {
		srv.Close()
	}
	s.stop.stop()
	s.closeSessions()
	// http.Server.Close does not wait for the handlers: one still running
	// (an initialize) may open a session after the sessions were closed.
	// Once they have returned (their connections are closed, their
	// contexts cancelled), such sessions are closed too.
	s.handling.wait(s.t)
	s.closeSessions()
}

// closeSessions closes the sessions of the servers handed out so far.
func (s *HTTPServer) closeSessions() {
	s.mu.Lock()
	servers := s.servers
	s.servers = nil
	s.mu.Unlock()
	for _, m := range servers {
		for ss := range m.Sessions() {
			ss.Close()
		}
	}
}

// handling counts the requests a handler is serving.
type handling struct {
	mu     sync.Mutex
	active int
	idle   chan struct{} // closed when active falls to 0, once waited for
}

// enter counts a request in; the function it returns counts it out.
func (h *handling) enter() func() {
	h.mu.Lock()
	h.active++
	h.mu.Unlock()
	return func() {
		h.mu.Lock()
		if h.active--; h.active == 0 && h.idle != nil {
			close(h.idle)
			h.idle = nil
		}
		h.mu.Unlock()
	}
}

// waiting reports whether wait is waiting.
func (h *handling) waiting() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.idle != nil
}

// wait waits until no request is being served (their connections closed
// and contexts cancelled, they return), for 10 s at most: a safety net
// for a handler that never returns, which fails the test.
func (h *handling) wait(t testing.TB) {
	h.mu.Lock()
	if h.active == 0 {
		h.mu.Unlock()
		return
	}
	if h.idle == nil {
		h.idle = make(chan struct{})
	}
	idle := h.idle
	h.mu.Unlock()
	select {
	case <-idle:
	case <-time.After(10 * time.Second):
		t.Errorf("mcptest: requests still being handled 10 s after the server stopped")
	}
}

// Restart stops the server if needed and serves again on the same port,
// with a new handler that knows none of the old sessions, as a restarted
// process would. Only servers made by Serve can restart.
func (s *HTTPServer) Restart() {
	s.t.Helper()
	s.RestartWith(s.newHandler())
}

// RestartWith is Restart with handler h.
func (s *HTTPServer) RestartWith(h http.Handler) {
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
// When the test ends, it closes the sessions those servers still have.
func Handler(t testing.TB, mode Mode, newServer func() *mcp.Server) http.Handler {
	var (
		mu      sync.Mutex
		servers []*mcp.Server
		stop    stopper
		serving handling
	)
	closeAll := func() {
		mu.Lock()
		defer mu.Unlock()
		for _, srv := range servers {
			for ss := range srv.Sessions() {
				ss.Close()
			}
		}
	}
	t.Cleanup(func() {
		stop.stop()
		closeAll()
		// A request still being served (its host stops without waiting
		// for its handlers) may open a session once they were closed;
		// with its session closed or its connection gone, it returns.
		serving.wait(t)
		closeAll()
	})
	h := handler(mode, func() *mcp.Server {
		srv := newServer()
		stop.install(srv)
		mu.Lock()
		if !slices.Contains(servers, srv) {
			servers = append(servers, srv)
		}
		mu.Unlock()
		return srv
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer serving.enter()()
		h.ServeHTTP(w, r)
	})
}

func handler(mode Mode, newServer func() *mcp.Server) http.Handler {
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

// stopper ends what the handlers of servers do when their host stops: it
// cancels the context of every request a server handles, and of every
// request a server sends to the client (a handler waiting for the client's
// answer with a context of its own, which the client may never answer once
// its connection is gone). go-sdk's ServerSession.Close waits for the
// handlers in flight; without this, a handler waiting for a client that
// went away would keep Stop waiting forever.
//
// Each stop ends the requests of its time only: a restarted server's
// requests get a fresh context.
type stopper struct {
	mu        sync.Mutex
	ctx       context.Context
	cancel    context.CancelFunc
	installed []*mcp.Server
}

// install adds the middleware to srv, once.
func (st *stopper) install(srv *mcp.Server) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if slices.Contains(st.installed, srv) {
		return
	}
	st.installed = append(st.installed, srv)
	mw := func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			defer context.AfterFunc(st.current(), cancel)()
			return next(ctx, method, req)
		}
	}
	srv.AddReceivingMiddleware(mw)
	srv.AddSendingMiddleware(mw)
}

// current is the context of the requests handled now.
func (st *stopper) current() context.Context {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.ctx == nil {
		st.ctx, st.cancel = context.WithCancel(context.Background())
	}
	return st.ctx
}

// stop cancels the requests in flight.
func (st *stopper) stop() {
	st.mu.Lock()
	cancel := st.cancel
	st.ctx, st.cancel = nil, nil
	st.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}
