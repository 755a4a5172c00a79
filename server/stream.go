package server

import (
	"net/http"
	"time"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/server/internal/stream"
)

// openStream starts the watch of a for a new stream: nil when the
// connection gets no protocol messages, an error when the server is
// shutting down.
func (s *Server) openStream(r *http.Request, a *agent.Agent) (*agent.Watcher, *api.APIError) {
	s.mu.Lock()
	open := s.streams
	s.mu.Unlock()
	if !open {
		return nil, apiErrorf(http.StatusServiceUnavailable, api.CodeShuttingDown, "the server is shutting down")
	}
	if f := s.opts.ShouldSendProtocolMessages; f != nil && !f(r) {
		return nil, nil
	}
	w := a.Watch(s.opts.StreamBuffer)
	if h := s.hooks.Load(); h != nil && h.onWatch != nil {
		h.onWatch(w)
	}
	return w, nil
}

// streamOptions are the options of the agents' streams (package stream).
func (s *Server) streamOptions() *stream.Options {
	return &stream.Options{KeepAlive: s.opts.KeepAlive, OriginPatterns: s.sec.OriginPatterns(), Done: s.ctx.Done(),
		BeforeWrite: func() {
			if h := s.hooks.Load(); h != nil && h.beforeWrite != nil {
				h.beforeWrite()
			}
		}}
}

// websocket serves the agent's WebSocket (stream.WebSocket).
func (s *Server) websocket(w http.ResponseWriter, r *http.Request, a *agent.Agent) {
	s.serveStream(w, r, a, stream.WebSocket)
}

// sse serves the agent's stream as server-sent events (stream.SSE).
func (s *Server) sse(w http.ResponseWriter, r *http.Request, a *agent.Agent) {
	s.serveStream(w, r, a, stream.SSE)
}

// serveStream opens a stream of a (openStream) and serves it with serve
// until it ends.
func (s *Server) serveStream(w http.ResponseWriter, r *http.Request, a *agent.Agent, serve func(http.ResponseWriter, *http.Request, *agent.Watcher, *stream.Options)) {
	watch, aerr := s.openStream(r, a)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	if watch != nil {
		defer watch.Stop()
	}
	serve(w, r, watch, s.streamOptions())
}

// keepAlive returns a channel that ticks every Options.KeepAlive, or never.
func (s *Server) keepAlive() (<-chan time.Time, func()) { return stream.KeepAlive(s.opts.KeepAlive) }
