package server

import (
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/netguard"
	"github.com/agentmcp/agentmcp/server/internal/stream"
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

// streamCall makes a tool call whose client asked for its events: the
// answer is a stream of server-sent events (api.CallEvent): the start, the
// server's progress notifications, its requests for input as they come
// and go, and the result or the error last. ctx is the call's, bounded
// by callContext.
func (s *Server) streamCall(ctx context.Context, w http.ResponseWriter, r *http.Request, a *agent.Agent, id, tool string, args json.RawMessage, limit time.Duration) {
	ctx, tc := a.TrackCall(ctx, id)
	defer tc.End()
	events := stream.StartEvents(w)
	send := events.Send
	send(api.CallEvent{Type: api.CallEventStart, CallID: tc.ID, ServerID: id, Tool: tool})

	progress := stream.NewProgressQueue()
	// A call that becomes a task outlives the stream (tasks.go).
	call := a.StartTaskCall(ctx, id, tool, args, &mcpclient.CallOptions{Progress: progress.Add})
	ended, started := ctx.Done(), call.Started()
	sendProgress := func() {
		for _, p := range progress.Take() {
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
		case <-progress.Ready():
			sendProgress()
		case <-tc.Changed():
			sendElicitations()
		case <-ping:
			events.Ping()
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
