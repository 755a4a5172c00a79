package stream

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/server/internal/reply"
)

// startSSE begins a response of server-sent events: their headers (not
// cached, not buffered by proxies) and 200.
func startSSE(w http.ResponseWriter) *http.ResponseController {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	return http.NewResponseController(w)
}

// Events writes a call's events (api.CallEvent) to its client as
// server-sent events, each named after its type, each write within
// WriteTimeout. Once a write fails (the client is gone), the rest are
// dropped: the call ends with its request. It is not safe for concurrent
// use.
type Events struct {
	w  http.ResponseWriter
	rc *http.ResponseController
	ok bool
}

// StartEvents starts the response of w as events.
func StartEvents(w http.ResponseWriter) *Events {
	return &Events{w: w, rc: startSSE(w), ok: true}
}

// Send writes ev; an event that cannot be encoded is written as an
// internal error event instead.
func (e *Events) Send(ev api.CallEvent) {
	if !e.ok {
		return
	}
	data, err := json.Marshal(ev)
	if err != nil {
		data, _ = json.Marshal(api.CallEvent{Type: api.CallEventError, Status: http.StatusInternalServerError,
			Error: reply.Errorf(http.StatusInternalServerError, api.CodeInternal, "cannot encode the call's %s event", ev.Type)})
		ev.Type = api.CallEventError
	}
	e.write("event: %s\ndata: %s\n\n", ev.Type, data)
}

// Ping writes a comment, so that an idle stream is not cut.
func (e *Events) Ping() {
	if e.ok {
		e.write(": keep-alive\n\n")
	}
}

func (e *Events) write(format string, args ...any) {
	e.rc.SetWriteDeadline(time.Now().Add(WriteTimeout))
	if _, err := fmt.Fprintf(e.w, format, args...); err != nil || e.rc.Flush() != nil {
		e.ok = false // the client is gone: the call ends with its request
	}
}

// maxProgressQueued bounds the progress notifications waiting to be
// written to a slow client; past it the oldest are dropped (the latest
// says where the call is).
const maxProgressQueued = 64

// ProgressQueue holds a call's progress notifications until they are
// written. Add never blocks: the Manager calls it on the connection's
// reading goroutine. It is safe for concurrent use.
type ProgressQueue struct {
	ready chan struct{} // capacity 1: something was added
	// mu guards queue.
	mu    sync.Mutex
	queue []*mcp.ProgressNotificationParams
}

// NewProgressQueue returns an empty queue.
func NewProgressQueue() *ProgressQueue { return &ProgressQueue{ready: make(chan struct{}, 1)} }

// Add queues p, dropping the oldest past 64 waiting.
func (q *ProgressQueue) Add(p *mcp.ProgressNotificationParams) {
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

// Ready receives after an Add.
func (q *ProgressQueue) Ready() <-chan struct{} { return q.ready }

// Take returns the queued notifications, oldest first, and empties the
// queue.
func (q *ProgressQueue) Take() []*mcp.ProgressNotificationParams {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.queue
	q.queue = nil
	return out
}
