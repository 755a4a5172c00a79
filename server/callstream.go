package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/internal/sse"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/netguard"
)

// The events of a tool call made with Accept: text/event-stream (see the
// package documentation, "Calls"): each is a server-sent event named after
// its type, with a JSON object of that type as its data.
const (
	// CallEventStart opens the stream: {"type":"call","callId","serverId","tool"}.
	CallEventStart = "call"
	// CallEventProgress is a progress notification of the server:
	// {"type":"progress","progress","total"?,"message"?}.
	CallEventProgress = "progress"
	// CallEventElicitation is a request for the user's input that the call's
	// server made and that waits for its answer (POST .../elicitations/{id}):
	// {"type":"elicitation","elicitation":Elicitation}.
	CallEventElicitation = "elicitation"
	// CallEventElicitationEnded says that a request announced by
	// CallEventElicitation no longer waits (answered, here or elsewhere, or
	// given up): {"type":"elicitation_ended","id"}.
	CallEventElicitationEnded = "elicitation_ended"
	// CallEventResult ends the stream with the CallToolResult:
	// {"type":"result","result":CallToolResult}.
	CallEventResult = "result"
	// CallEventError ends the stream with the error the JSON answer would
	// have had: {"type":"error","status",...,"error":{code,message,serverId?}}.
	CallEventError = "error"
)

// CallEvent is one event of a streamed tool call; Type says which fields
// are set.
type CallEvent struct {
	Type string `json:"type"`
	// CallID, ServerID and Tool are set in the start event. CallID is the
	// callId of the call's elicitations.
	CallID   string `json:"callId,omitempty"`
	ServerID string `json:"serverId,omitempty"`
	Tool     string `json:"tool,omitempty"`
	// Progress, Total and Message are set in a progress event (Total is
	// zero when the server gave none).
	Progress float64 `json:"progress,omitempty"`
	Total    float64 `json:"total,omitempty"`
	Message  string  `json:"message,omitempty"`
	// Elicitation is set in an elicitation event.
	Elicitation *Elicitation `json:"elicitation,omitempty"`
	// ID is the elicitation's id in an elicitation_ended event.
	ID string `json:"id,omitempty"`
	// Result is set in the result event.
	Result *mcp.CallToolResult `json:"result,omitempty"`
	// Status (the HTTP status the JSON answer would have had) and Error
	// are set in the error event.
	Status int       `json:"status,omitempty"`
	Error  *APIError `json:"error,omitempty"`
}

// wantsEvents reports whether a call's client asks for its events as a
// stream (Accept: text/event-stream) rather than the JSON result alone.
func wantsEvents(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		for _, part := range strings.Split(v, ",") {
			if mt, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil && mt == "text/event-stream" {
				return true
			}
		}
	}
	return false
}

// maxProgressQueued bounds the progress notifications waiting to be
// written to a slow client; past it the oldest are dropped (the latest
// says where the call is).
const maxProgressQueued = 64

// progressQueue holds a call's progress notifications until they are
// written. The Manager calls add on the connection's reading goroutine:
// it never blocks.
type progressQueue struct {
	ready chan struct{} // capacity 1: something was added
	// mu guards queue.
	mu    sync.Mutex
	queue []*mcp.ProgressNotificationParams
}

func (q *progressQueue) add(p *mcp.ProgressNotificationParams) {
	q.mu.Lock()
	if len(q.queue) == maxProgressQueued {
		q.queue = q.queue[1:]
	}
	q.queue = append(q.queue, p)
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

func (q *progressQueue) take() []*mcp.ProgressNotificationParams {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.queue
	q.queue = nil
	return out
}

// streamCall makes a tool call whose client asked for its events: the
// answer is a stream of server-sent events (CallEvent): the start, the
// server's progress notifications, its requests for input as they come
// and go, and the result or the error last. ctx is the call's, bounded
// by callContext.
func (s *Server) streamCall(ctx context.Context, w http.ResponseWriter, r *http.Request, a *agent.Agent, id, tool string, args json.RawMessage, limit time.Duration) {
	ctx, tc := a.TrackCall(ctx, id)
	defer tc.End()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	ok := true
	send := func(ev CallEvent) {
		if !ok {
			return
		}
		data, err := json.Marshal(ev)
		if err != nil {
			data, _ = json.Marshal(CallEvent{Type: CallEventError, Status: http.StatusInternalServerError,
				Error: apiErrorf(http.StatusInternalServerError, CodeInternal, "cannot encode the call's %s event", ev.Type)})
			ev.Type = CallEventError
		}
		rc.SetWriteDeadline(time.Now().Add(writeTimeout))
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.Type, data); err != nil || rc.Flush() != nil {
			ok = false // the client is gone: the call ends with its request
		}
	}
	send(CallEvent{Type: CallEventStart, CallID: tc.ID, ServerID: id, Tool: tool})

	progress := &progressQueue{ready: make(chan struct{}, 1)}
	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := a.CallTool(ctx, id, tool, args, &mcpclient.CallOptions{Progress: progress.add})
		done <- outcome{res, err}
	}()
	sendProgress := func() {
		for _, p := range progress.take() {
			send(CallEvent{Type: CallEventProgress, Progress: p.Progress, Total: p.Total, Message: netguard.Sanitize(p.Message)})
		}
	}
	shown := map[string]bool{}
	sendElicitations := func() {
		now := map[string]bool{}
		for _, e := range tc.Elicitations() {
			now[e.ID] = true
			if !shown[e.ID] {
				shown[e.ID] = true
				send(CallEvent{Type: CallEventElicitation, Elicitation: &e})
			}
		}
		for eid := range shown {
			if !now[eid] {
				delete(shown, eid)
				send(CallEvent{Type: CallEventElicitationEnded, ID: eid})
			}
		}
	}
	ping, stopPing := s.keepAlive()
	defer stopPing()
	for {
		select {
		case <-progress.ready:
			sendProgress()
		case <-tc.Changed():
			sendElicitations()
		case <-ping:
			if ok {
				rc.SetWriteDeadline(time.Now().Add(writeTimeout))
				if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil || rc.Flush() != nil {
					ok = false
				}
			}
		case out := <-done:
			sendProgress() // delivered before the call returned
			tc.End()
			sendElicitations()
			if out.err != nil {
				aerr := s.callFailed(ctx, r, a, id, fmt.Sprintf("tools/call %q", tool), limit, out.err)
				aerr.Message = netguard.Sanitize(aerr.Message)
				send(CallEvent{Type: CallEventError, Status: aerr.Status, Error: aerr})
				return
			}
			send(CallEvent{Type: CallEventResult, Result: out.res})
			return
		}
	}
}

// CallWatch receives the events of a call made with CallToolWatched. Its
// functions (each may be nil) are called in order on the goroutine of
// CallToolWatched, and must not block: a question to ask the user is asked
// on a goroutine of the caller's, and answered with AnswerElicitation.
type CallWatch struct {
	// Started receives the call's id (the CallID of its elicitations).
	Started func(callID string)
	// Progress receives the server's progress notifications.
	Progress func(*mcp.ProgressNotificationParams)
	// Elicitation receives a request for the user's input of the call's
	// server, pending until answered (AnswerElicitation, here or on the
	// dashboard) or given up.
	Elicitation func(Elicitation)
	// ElicitationEnded says that request id no longer waits.
	ElicitationEnded func(id string)
}

// maxCallEvent bounds one event of a streamed call (its result included).
const maxCallEvent = 64 << 20

// CallToolWatched is CallTool, with the call's events streamed to w as
// they happen (Accept: text/event-stream): its progress, and the requests
// for input its server makes, which the caller may answer. The result and
// errors are those of CallTool.
func (c *Client) CallToolWatched(ctx context.Context, serverID, name string, args any, w *CallWatch) (*mcp.CallToolResult, error) {
	if w == nil {
		w = &CallWatch{}
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(CallToolRequest{Name: name, Arguments: raw, TimeoutMS: timeoutMS(ctx)})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/servers/"+url.PathEscape(serverID)+"/tools/call", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	res, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); res.StatusCode >= 300 || mt != "text/event-stream" {
		return nil, decodeAnswer(res, nil)
	}
	rd := sse.NewLongReader(res.Body, maxCallEvent)
	defer rd.Release()
	for {
		e, err := rd.Next()
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, fmt.Errorf("server client: reading the events of tools/call %q: %w", name, err)
		}
		var ev CallEvent
		if err := json.Unmarshal(e.Data, &ev); err != nil {
			return nil, fmt.Errorf("server client: decoding an event of tools/call %q: %w", name, err)
		}
		switch ev.Type {
		case CallEventStart:
			if w.Started != nil {
				w.Started(ev.CallID)
			}
		case CallEventProgress:
			if w.Progress != nil {
				w.Progress(&mcp.ProgressNotificationParams{Progress: ev.Progress, Total: ev.Total, Message: ev.Message})
			}
		case CallEventElicitation:
			if w.Elicitation != nil && ev.Elicitation != nil {
				w.Elicitation(*ev.Elicitation)
			}
		case CallEventElicitationEnded:
			if w.ElicitationEnded != nil {
				w.ElicitationEnded(ev.ID)
			}
		case CallEventResult:
			if ev.Result == nil {
				return nil, fmt.Errorf("server client: tools/call %q: a result event without a result", name)
			}
			return ev.Result, nil
		case CallEventError:
			if ev.Error == nil {
				return nil, fmt.Errorf("server client: tools/call %q: an error event without an error", name)
			}
			ev.Error.Status = ev.Status
			return nil, ev.Error
		}
	}
}
