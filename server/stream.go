package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/agentmcp/agentmcp/agent"
)

// FrameType is the type of the frames that carry an agent's MCP state, as
// in the seed: {"type":"cf_agent_mcp_servers","mcp":MCPServersState}.
const FrameType = "cf_agent_mcp_servers"

// Frame is a message of the WebSocket and SSE streams.
type Frame struct {
	Type string                `json:"type"`
	MCP  agent.MCPServersState `json:"mcp"`
}

// Why a stream ends, as the WebSocket close reason and the SSE close event.
const (
	reasonFellBehind = "fell behind"
	reasonGoingAway  = "server shutting down"
)

// writeTimeout bounds one write to a stream client.
const writeTimeout = 10 * time.Second

// hub fans an agent's state out to its stream clients. One goroutine
// computes every frame and delivers it, so that each client sees states in
// order, its first frame computed after it joined. Delivery never blocks:
// a client whose buffer is full is dropped.
type hub struct {
	a      *agent.Agent
	elicit *elicitations
	buffer int
	wake   chan struct{} // capacity 1
	done   chan struct{} // closed when run returns
	quit   chan struct{} // closed by stop

	dispose func()

	// mu guards the fields below.
	mu            sync.Mutex
	changed       bool                 // the state changed since the last frame
	elicitChanged bool                 // the pending elicitations changed
	clients       map[*client]struct{} // clients that had their first frame
	joining       []*client            // clients waiting for their first frame
	stopped       bool
}

// frame is one encoded stream message and its type (FrameType or
// ElicitationsFrameType), the SSE event name.
type frame struct {
	typ  string
	data []byte
}

// client is one stream connection.
type client struct {
	send chan frame    // frames to write, buffered
	gone chan struct{} // closed when the hub drops the client
	// reason says why the hub dropped it; set before gone is closed.
	reason string
}

func newHub(s *Server, a *agent.Agent, el *elicitations) *hub {
	h := &hub{
		a:       a,
		elicit:  el,
		buffer:  s.opts.StreamBuffer,
		wake:    make(chan struct{}, 1),
		done:    make(chan struct{}),
		quit:    make(chan struct{}),
		clients: map[*client]struct{}{},
	}
	h.dispose = a.OnMCPUpdate(func(agent.MCPServersState) {
		h.mu.Lock()
		h.changed = true
		h.mu.Unlock()
		h.poke()
	})
	go h.run()
	return h
}

// elicitationsChanged notes that the pending elicitations changed.
func (h *hub) elicitationsChanged() {
	h.mu.Lock()
	h.elicitChanged = true
	h.mu.Unlock()
	h.poke()
}

func (h *hub) poke() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

func (h *hub) run() {
	defer close(h.done)
	for {
		select {
		case <-h.wake:
		case <-h.quit:
			return
		}
		h.mu.Lock()
		changed, elicitChanged, joining := h.changed, h.elicitChanged, h.joining
		h.changed, h.elicitChanged, h.joining = false, false, nil
		idle := len(joining) == 0 && (!(changed || elicitChanged) || len(h.clients) == 0)
		h.mu.Unlock()
		if idle {
			continue
		}
		// Frames are computed after the flags were taken: they include
		// every change the flags report.
		state, elicit := frame{typ: FrameType}, frame{typ: ElicitationsFrameType}
		if changed || len(joining) > 0 {
			state.data, _ = json.Marshal(Frame{Type: FrameType, MCP: h.a.MCPServers()})
		}
		pending := h.elicit.list()
		if elicitChanged || (len(joining) > 0 && len(pending) > 0) {
			elicit.data, _ = json.Marshal(ElicitationsFrame{Type: ElicitationsFrameType, Elicitations: pending})
		}
		h.mu.Lock()
		if h.stopped {
			h.mu.Unlock()
			return
		}
		for c := range h.clients {
			if changed && !h.deliverLocked(c, state) {
				continue
			}
			if elicitChanged {
				h.deliverLocked(c, elicit)
			}
		}
		for _, c := range joining {
			if !h.deliverLocked(c, state) {
				continue
			}
			if len(pending) > 0 && !h.deliverLocked(c, elicit) {
				continue
			}
			h.clients[c] = struct{}{}
		}
		h.mu.Unlock()
	}
}

// deliverLocked queues f for c, or drops c when its buffer is full.
func (h *hub) deliverLocked(c *client, f frame) bool {
	select {
	case c.send <- f:
		return true
	default:
		h.dropLocked(c, reasonFellBehind)
		return false
	}
}

func (h *hub) dropLocked(c *client, reason string) {
	delete(h.clients, c)
	select {
	case <-c.gone:
	default:
		c.reason = reason
		close(c.gone)
	}
}

// join adds a client, which gets the current state as its first frame. It
// returns nil when the hub has stopped.
func (h *hub) join() *client {
	c := &client{send: make(chan frame, h.buffer), gone: make(chan struct{})}
	h.mu.Lock()
	if h.stopped {
		h.mu.Unlock()
		return nil
	}
	h.joining = append(h.joining, c)
	h.mu.Unlock()
	h.poke()
	return c
}

// leave removes a client whose connection ended.
func (h *hub) leave(c *client) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.clients, c)
	for i, j := range h.joining {
		if j == c {
			h.joining = append(h.joining[:i:i], h.joining[i+1:]...)
			break
		}
	}
}

// stop drops every client and ends the hub. It is idempotent.
func (h *hub) stop() {
	h.mu.Lock()
	if h.stopped {
		h.mu.Unlock()
		<-h.done
		return
	}
	h.stopped = true
	for c := range h.clients {
		h.dropLocked(c, reasonGoingAway)
	}
	for _, c := range h.joining {
		h.dropLocked(c, reasonGoingAway)
	}
	h.joining = nil
	h.mu.Unlock()
	h.dispose()
	close(h.quit)
	<-h.done
}

// streamClient joins the hub of e for a new stream, unless the connection
// gets no protocol messages (nil client, nil error) or the server is
// shutting down.
func (s *Server) streamClient(r *http.Request, e *entry) (*client, *APIError) {
	s.mu.Lock()
	open := s.streams
	s.mu.Unlock()
	if !open {
		return nil, apiErrorf(http.StatusServiceUnavailable, CodeShuttingDown, "the server is shutting down")
	}
	if f := s.opts.ShouldSendProtocolMessages; f != nil && !f(r) {
		return nil, nil
	}
	c := e.hub.join()
	if c == nil {
		return nil, apiErrorf(http.StatusServiceUnavailable, CodeShuttingDown, "the server is shutting down")
	}
	return c, nil
}

// websocket serves the agent's WebSocket: the state on connect and after
// every change. Messages from the client are not expected: one closes the
// connection (policy violation).
func (s *Server) websocket(w http.ResponseWriter, r *http.Request, e *entry) {
	c, aerr := s.streamClient(r, e)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	if c != nil {
		defer e.hub.leave(c)
	}
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{OriginPatterns: s.sec.originPatterns})
	if err != nil {
		return // Accept wrote the response
	}
	defer conn.CloseNow()
	// Reading is only for control frames; it ends when the client goes.
	// (Not s.ctx: cancelling it would drop the connection without the
	// close frame sent below.)
	ctx := conn.CloseRead(context.Background())
	var gone <-chan struct{}
	var send <-chan frame
	if c != nil {
		gone, send = c.gone, c.send
	}
	ping, stopPing := s.keepAlive()
	defer stopPing()
	for {
		select {
		case f := <-send:
			wctx, cancel := context.WithTimeout(ctx, writeTimeout)
			err := conn.Write(wctx, websocket.MessageText, f.data)
			cancel()
			if err != nil {
				return
			}
		case <-gone:
			status := websocket.StatusTryAgainLater
			if c.reason == reasonGoingAway {
				status = websocket.StatusGoingAway
			}
			conn.Close(status, c.reason)
			return
		case <-ping:
			pctx, cancel := context.WithTimeout(ctx, writeTimeout)
			err := conn.Ping(pctx)
			cancel()
			if err != nil {
				return
			}
		case <-s.ctx.Done():
			conn.Close(websocket.StatusGoingAway, reasonGoingAway)
			return
		case <-ctx.Done():
			return
		}
	}
}

// keepAlive returns a channel that ticks every Options.KeepAlive, or never.
func (s *Server) keepAlive() (<-chan time.Time, func()) {
	if s.opts.KeepAlive < 0 {
		return nil, func() {}
	}
	t := time.NewTicker(s.opts.KeepAlive)
	return t.C, t.Stop
}

// sse serves the agent's stream as server-sent events, for curl: the
// frames of the WebSocket, each as an event named after its type,
//
//	event: cf_agent_mcp_servers
//	data: {"type":"cf_agent_mcp_servers","mcp":{...}}
//
//	event: agentmcp_elicitations
//	data: {"type":"agentmcp_elicitations","elicitations":[...]}
//
// on connect and after every change. When the server drops the stream it
// sends "event: close" with {"reason": "..."} first.
func (s *Server) sse(w http.ResponseWriter, r *http.Request, e *entry) {
	c, aerr := s.streamClient(r, e)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	if c != nil {
		defer e.hub.leave(c)
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	write := func(format string, args ...any) bool {
		rc.SetWriteDeadline(time.Now().Add(writeTimeout))
		if _, err := fmt.Fprintf(w, format, args...); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !write("retry: 2000\n\n") {
		return
	}
	var gone <-chan struct{}
	var send <-chan frame
	if c != nil {
		gone, send = c.gone, c.send
	}
	ping, stopPing := s.keepAlive()
	defer stopPing()
	for {
		select {
		case f := <-send:
			if !write("event: %s\ndata: %s\n\n", f.typ, f.data) {
				return
			}
		case <-gone:
			reason, _ := json.Marshal(map[string]string{"reason": c.reason})
			write("event: close\ndata: %s\n\n", reason)
			return
		case <-ping:
			if !write(": keep-alive\n\n") {
				return
			}
		case <-s.ctx.Done():
			write("event: close\ndata: {\"reason\":%q}\n\n", reasonGoingAway)
			return
		case <-r.Context().Done():
			return
		}
	}
}
