package stream

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

// WriteTimeout bounds one write to a stream client.
const WriteTimeout = 10 * time.Second

// Options configure a stream.
type Options struct {
	// KeepAlive is the interval of WebSocket pings and SSE comments.
	// Zero or negative means none.
	KeepAlive time.Duration

	// OriginPatterns are the origins, besides the request's own host,
	// whose pages may open the WebSocket (websocket.AcceptOptions).
	OriginPatterns []string

	// Done, when closed, ends the stream: the server is going away.
	Done <-chan struct{}

	// BeforeWrite, if set, runs before each update is written to a
	// WebSocket (for tests).
	BeforeWrite func()
}

// KeepAlive returns a channel that ticks every d, or never (d <= 0), and
// the function that stops it.
func KeepAlive(d time.Duration) (<-chan time.Time, func()) {
	if d <= 0 {
		return nil, func() {}
	}
	t := time.NewTicker(d)
	return t.C, t.Stop
}

// Frame is one encoded stream message and its type (api.FrameType or
// api.ElicitationsFrameType), the SSE event name.
type Frame struct {
	Type string
	Data []byte
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

// Encode encodes an agent's update as the frames the streams send: the
// state (api.Frame), then the pending elicitations (api.ElicitationsFrame),
// each when the update has it.
func Encode(up agent.Update) []Frame {
	var out []Frame
	if up.State != nil {
		data, _ := json.Marshal(stateFrame{Type: api.FrameType, MCP: *up.State})
		out = append(out, Frame{Type: api.FrameType, Data: data})
	}
	if up.Elicitations != nil {
		data, _ := json.Marshal(elicitationsFrame{Type: api.ElicitationsFrameType, Elicitations: up.Elicitations})
		out = append(out, Frame{Type: api.ElicitationsFrameType, Data: data})
	}
	return out
}

// watch is what a connection listens to: its agent's watch, or nothing
// when the connection gets no protocol messages.
type watch struct {
	w *agent.Watcher // nil: no protocol messages
}

func (st watch) updates() <-chan agent.Update {
	if st.w == nil {
		return nil
	}
	return st.w.Updates()
}

func (st watch) done() <-chan struct{} {
	if st.w == nil {
		return nil
	}
	return st.w.Done()
}

// reason says why the watch ended, and whether the server is going away
// (as opposed to the client falling behind).
func (st watch) reason() (string, bool) {
	if errors.Is(st.w.Err(), agent.ErrWatcherTooSlow) {
		return reasonFellBehind, false
	}
	return reasonGoingAway, true
}

// WebSocket serves w's updates (w may be nil) as a WebSocket: the state on
// connect and after every change. The caller stops w afterwards.
func WebSocket(rw http.ResponseWriter, r *http.Request, w *agent.Watcher, o *Options) {
	st := watch{w: w}
	conn, err := websocket.Accept(rw, r, &websocket.AcceptOptions{OriginPatterns: o.OriginPatterns})
	if err != nil {
		return // Accept wrote the response
	}
	defer conn.CloseNow()
	// Reading is only for control frames; it ends when the client goes.
	// (Not Done: it would drop the connection without the close frame
	// sent below.)
	ctx := conn.CloseRead(context.Background())
	ping, stopPing := KeepAlive(o.KeepAlive)
	defer stopPing()
	for {
		select {
		case up := <-st.updates():
			if o.BeforeWrite != nil {
				o.BeforeWrite()
			}
			for _, f := range Encode(up) {
				wctx, cancel := context.WithTimeout(ctx, WriteTimeout)
				err := conn.Write(wctx, websocket.MessageText, f.Data)
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
			pctx, cancel := context.WithTimeout(ctx, WriteTimeout)
			err := conn.Ping(pctx)
			cancel()
			if err != nil {
				return
			}
		case <-o.Done:
			conn.Close(websocket.StatusGoingAway, reasonGoingAway)
			return
		case <-ctx.Done():
			return
		}
	}
}

// SSE serves w's updates (w may be nil) as server-sent events, for curl:
// the frames of the WebSocket, each as an event named after its type,
//
//	event: cf_agent_mcp_servers
//	data: {"type":"cf_agent_mcp_servers","mcp":{...}}
//
//	event: agentmcp_elicitations
//	data: {"type":"agentmcp_elicitations","elicitations":[...]}
//
// on connect and after every change. When the stream is dropped it sends
// "event: close" with {"reason": "..."} first. The caller stops w
// afterwards.
func SSE(rw http.ResponseWriter, r *http.Request, w *agent.Watcher, o *Options) {
	st := watch{w: w}
	rc := startSSE(rw)
	write := func(format string, args ...any) bool {
		rc.SetWriteDeadline(time.Now().Add(WriteTimeout))
		if _, err := fmt.Fprintf(rw, format, args...); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !write("retry: 2000\n\n") {
		return
	}
	ping, stopPing := KeepAlive(o.KeepAlive)
	defer stopPing()
	for {
		select {
		case up := <-st.updates():
			for _, f := range Encode(up) {
				if !write("event: %s\ndata: %s\n\n", f.Type, f.Data) {
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
		case <-o.Done:
			write("event: close\ndata: {\"reason\":%q}\n\n", reasonGoingAway)
			return
		case <-r.Context().Done():
			return
		}
	}
}
