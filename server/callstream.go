package server

import (
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/netguard"
)

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
// answer is a stream of server-sent events (api.CallEvent): the start, the
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
	send := func(ev api.CallEvent) {
		if !ok {
			return
		}
		data, err := json.Marshal(ev)
		if err != nil {
			data, _ = json.Marshal(api.CallEvent{Type: api.CallEventError, Status: http.StatusInternalServerError,
				Error: apiErrorf(http.StatusInternalServerError, api.CodeInternal, "cannot encode the call's %s event", ev.Type)})
			ev.Type = api.CallEventError
		}
		rc.SetWriteDeadline(time.Now().Add(writeTimeout))
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.Type, data); err != nil || rc.Flush() != nil {
			ok = false // the client is gone: the call ends with its request
		}
	}
	send(api.CallEvent{Type: api.CallEventStart, CallID: tc.ID, ServerID: id, Tool: tool})

	progress := &progressQueue{ready: make(chan struct{}, 1)}
	// A call that becomes a task outlives the stream (tasks.go).
	call := a.StartTaskCall(ctx, id, tool, args, &mcpclient.CallOptions{Progress: progress.add})
	ended, started := ctx.Done(), call.Started()
	sendProgress := func() {
		for _, p := range progress.take() {
			send(api.CallEvent{Type: api.CallEventProgress, Progress: p.Progress, Total: p.Total, Message: netguard.Sanitize(p.Message)})
		}
	}
	shown := map[string]bool{}
	sendElicitations := func() {
		now := map[string]bool{}
		for _, e := range tc.Elicitations() {
			now[e.ID] = true
			if !shown[e.ID] {
				shown[e.ID] = true
				ae := api.Elicitation(e)
				send(api.CallEvent{Type: api.CallEventElicitation, Elicitation: &ae})
			}
		}
		for eid := range shown {
			if !now[eid] {
				delete(shown, eid)
				send(api.CallEvent{Type: api.CallEventElicitationEnded, ID: eid})
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
		case <-started:
			started = nil
			t := pendingTask(r, a, call.Task())
			send(api.CallEvent{Type: api.CallEventTask, Task: &t})
		case <-ended:
			ended = nil
			if h := call.Release(context.Cause(ctx)); h != nil {
				select {
				case <-call.Done(): // it ended meanwhile: its outcome is sent
				default:
					sendProgress()
					t := pendingTask(r, a, h)
					send(api.CallEvent{Type: api.CallEventTaskRunning, Status: http.StatusAccepted, Task: &t})
					return
				}
			}
		case <-call.Done():
			var out struct {
				res *mcp.CallToolResult
				err error
			}
			out.res, out.err = call.Result()
			sendProgress() // delivered before the call returned
			tc.End()
			sendElicitations()
			if out.err != nil {
				aerr := s.callFailed(ctx, r, a, id, fmt.Sprintf("tools/call %q", tool), limit, out.err)
				aerr.Message = netguard.Sanitize(aerr.Message)
				send(api.CallEvent{Type: api.CallEventError, Status: aerr.Status, Error: aerr})
				return
			}
			res, err := json.Marshal(out.res)
			if err != nil {
				send(api.CallEvent{Type: api.CallEventError, Status: http.StatusInternalServerError,
					Error: apiErrorf(http.StatusInternalServerError, api.CodeInternal, "cannot encode the call's %s event", api.CallEventResult)})
				return
			}
			send(api.CallEvent{Type: api.CallEventResult, Result: res})
			return
		}
	}
}
