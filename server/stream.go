package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/coder/websocket"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/api"
)

// Why a stream ends, as the WebSocket close reason and the SSE close event.
const (
	reasonFellBehind = "fell behind"
	reasonGoingAway  = "server shutting down"
)

// writeTimeout bounds one write to a stream client.
const writeTimeout = 10 * time.Second

// frame is one encoded stream message and its type (api.FrameType or
// api.ElicitationsFrameType), the SSE event name.
type frame struct {
	typ  string
	data []byte
}

// stateFrame and elicitationsFrame are api.Frame and
// api.ElicitationsFrame as the agent has them: the JSON is the same.
type stateFrame struct {
	Type string                `json:"type"`
	MCP  agent.MCPServersState `json:"mcp"`
}

type elicitationsFrame struct {
	Type         string              `json:"type"`
	Elicitations []agent.Elicitation `json:"elicitations"`
}

// encodeUpdate encodes an agent's update as stream frames.
func encodeUpdate(up agent.Update) []frame {
	var out []frame
	if up.State != nil {
		data, _ := json.Marshal(stateFrame{Type: api.FrameType, MCP: *up.State})
		out = append(out, frame{typ: api.FrameType, data: data})
	}
	if up.Elicitations != nil {
		data, _ := json.Marshal(elicitationsFrame{Type: api.ElicitationsFrameType, Elicitations: up.Elicitations})
		out = append(out, frame{typ: api.ElicitationsFrameType, data: data})
	}
	return out
}

// stream is what a WebSocket or SSE connection listens to: its agent's
// watch, or nothing when the connection gets no protocol messages.
type stream struct {
	w *agent.Watcher // nil: no protocol messages
}

func (st stream) updates() <-chan agent.Update {
	if st.w == nil {
		return nil
	}
	return st.w.Updates()
}

func (st stream) done() <-chan struct{} {
	if st.w == nil {
		return nil
	}
	return st.w.Done()
}

// reason says why the watch ended, and whether the server is going away
// (as opposed to the client falling behind).
func (st stream) reason() (string, bool) {
	if errors.Is(st.w.Err(), agent.ErrWatcherTooSlow) {
		return reasonFellBehind, false
	}
	return reasonGoingAway, true
}

func (st stream) stop() {
	if st.w != nil {
		st.w.Stop()
	}
}

// openStream starts the watch of a for a new stream, unless the
// connection gets no protocol messages or the server is shutting down.
func (s *Server) openStream(r *http.Request, a *agent.Agent) (stream, *api.APIError) {
	s.mu.Lock()
	open := s.streams
	s.mu.Unlock()
	if !open {
		return stream{}, apiErrorf(http.StatusServiceUnavailable, api.CodeShuttingDown, "the server is shutting down")
	}
	if f := s.opts.ShouldSendProtocolMessages; f != nil && !f(r) {
		return stream{}, nil
	}
	w := a.Watch(s.opts.StreamBuffer)
	if h := s.hooks.Load(); h != nil && h.onWatch != nil {
		h.onWatch(w)
	}
	return stream{w: w}, nil
}

// websocket serves the agent's WebSocket: the state on connect and after
// every change. Messages from the client are not expected: one closes the
// connection (policy violation).
func (s *Server) websocket(w http.ResponseWriter, r *http.Request, a *agent.Agent) {
	st, aerr := s.openStream(r, a)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	defer st.stop()
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{OriginPatterns: s.sec.OriginPatterns()})
	if err != nil {
		return // Accept wrote the response
	}
	defer conn.CloseNow()
	// Reading is only for control frames; it ends when the client goes.
	// (Not s.ctx: cancelling it would drop the connection without the
	// close frame sent below.)
	ctx := conn.CloseRead(context.Background())
	ping, stopPing := s.keepAlive()
	defer stopPing()
	for {
		select {
		case up := <-st.updates():
			if h := s.hooks.Load(); h != nil && h.beforeWrite != nil {
				h.beforeWrite()
			}
			for _, f := range encodeUpdate(up) {
				wctx, cancel := context.WithTimeout(ctx, writeTimeout)
				err := conn.Write(wctx, websocket.MessageText, f.data)
				cancel()
				if err != nil {
					return
				}
			}
		case <-st.done():
			reason, away := st.reason()
			status := websocket.StatusTryAgainLater
			if away {
				status = websocket.StatusGoingAway
			}
			conn.Close(status, reason)
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
func (s *Server) sse(w http.ResponseWriter, r *http.Request, a *agent.Agent) {
	st, aerr := s.openStream(r, a)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	defer st.stop()
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
	ping, stopPing := s.keepAlive()
	defer stopPing()
	for {
		select {
		case up := <-st.updates():
			for _, f := range encodeUpdate(up) {
				if !write("event: %s\ndata: %s\n\n", f.typ, f.data) {
					return
				}
			}
		case <-st.done():
			why, _ := st.reason()
			reason, _ := json.Marshal(map[string]string{"reason": why})
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
