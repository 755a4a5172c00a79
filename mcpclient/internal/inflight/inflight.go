// Package inflight tracks the requests one MCP session of package
// mcpclient's Manager has in flight, so that the requests a server sends
// meanwhile (elicitation, sampling) end with the call that caused them,
// and so that a call knows whether it went through multi round-trip
// retries (2026-07-28 input requests).
//
// # Usage
//
// The session's outermost Manager middleware wraps each request in
// [Calls.Begin] and [Call.End]; the context Begin returns carries the
// [Call] down to the connection ([FromContext]), which notes its retry
// rounds ([Call.NoteRound]). A handler of a server request runs in the context
// [Calls.RequestContext] gives it, in which [Origins] names the calls the
// request may belong to.
//
// # Concurrency
//
// Calls and Call are safe for concurrent use.
//
// # Errors
//
// The context of a server request is cancelled with cause
// [ErrOriginCancelled] when the call that caused it was cancelled, and
// with the cause the owner chose when the owner closes.
package inflight

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
)

// Calls are the requests in flight on one session.
type Calls struct {
	// mu guards calls. It is never held across I/O.
	mu    sync.Mutex
	calls map[*Call]struct{}
}

// Call is one request in flight on a session.
type Call struct {
	ctx       context.Context // the context it was sent in, for its values (Origins)
	done      chan struct{}   // closed when it returns
	cancelled atomic.Bool     // its caller gave up; set before done is closed
	// retried is set when a round of it carried inputResponses or a
	// requestState: its result came through a multi round-trip retry.
	retried atomic.Bool
}

// callKey is the context key of the *Call a context belongs to.
type callKey struct{}

// Begin registers a request sent in ctx, and returns the context to send
// it in, which carries the Call. End must be called when it returns.
func (cs *Calls) Begin(ctx context.Context) (context.Context, *Call) {
	cl := &Call{ctx: ctx, done: make(chan struct{})}
	cs.mu.Lock()
	if cs.calls == nil {
		cs.calls = map[*Call]struct{}{}
	}
	cs.calls[cl] = struct{}{}
	cs.mu.Unlock()
	return context.WithValue(ctx, callKey{}, cl), cl
}

// End notes that the call returned, cancelled when its caller gave up.
func (cs *Calls) End(cl *Call, cancelled bool) {
	cs.mu.Lock()
	delete(cs.calls, cl)
	cs.mu.Unlock()
	cl.cancelled.Store(cancelled)
	close(cl.done)
}

// Retried reports whether a round of the call carried input responses or
// a request state (NoteRound).
func (cl *Call) Retried() bool { return cl.retried.Load() }

// FromContext returns the Call of a request sent in ctx (Begin), if any.
func FromContext(ctx context.Context) (*Call, bool) {
	cl, ok := ctx.Value(callKey{}).(*Call)
	return cl, ok
}

// NoteRound notes a round of the call written with params: if they carry
// input responses or a request state, the call was retried.
func (cl *Call) NoteRound(params json.RawMessage) {
	if !cl.retried.Load() && isRetryRound(params) {
		cl.retried.Store(true)
	}
}

// isRetryRound reports whether request params carry input responses or a
// request state.
func isRetryRound(params json.RawMessage) bool {
	if !bytes.Contains(params, []byte(`"inputResponses"`)) && !bytes.Contains(params, []byte(`"requestState"`)) {
		return false // most requests: no need to decode them
	}
	var p struct {
		InputResponses json.RawMessage `json:"inputResponses"`
		RequestState   *string         `json:"requestState"`
	}
	if json.Unmarshal(params, &p) != nil {
		return false
	}
	return p.RequestState != nil || (len(p.InputResponses) > 0 && string(p.InputResponses) != "null")
}

// ErrOriginCancelled is the cause of a server request's context when the
// call it arrived during was cancelled.
var ErrOriginCancelled = errors.New("the call that led to this request was cancelled")

// RequestContext returns the context for a handler of a server request
// (elicitation, sampling) that arrived in ctx, and a function to call when
// the handler returns. The context ends with life (with cause closed), and
// with the call that caused the request:
//
//   - a request fulfilled within a call (a 2026-07-28 input request, or a
//     -32042 URL elicitation) has that call's context already;
//   - a legacy server request (elicitation/create, sampling/createMessage)
//     is cancelled by the server with notifications/cancelled when it gives
//     up, which go-sdk honours; and because a server may not (or may not be
//     able to, once the call's response stream is closed), it is also
//     cancelled once every call that was in flight on the session when it
//     arrived has ended, if one of them was cancelled by its caller. With
//     one call in flight, that is exactly its originating call.
func (cs *Calls) RequestContext(ctx, life context.Context, closed error) (context.Context, func()) {
	var calls []*Call
	if _, inCall := FromContext(ctx); !inCall {
		cs.mu.Lock()
		calls = slices.Collect(maps.Keys(cs.calls))
		cs.mu.Unlock()
		ctx = context.WithValue(ctx, originsKey{}, calls)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(life, func() { cancel(closed) })
	if len(calls) == 0 {
		return ctx, func() { stop(); cancel(nil) }
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		cancelled := false
		for _, cl := range calls {
			select {
			case <-cl.done:
				cancelled = cancelled || cl.cancelled.Load()
			case <-ctx.Done():
				return
			}
		}
		if cancelled {
			cancel(ErrOriginCancelled)
		}
	})
	return ctx, func() {
		stop()
		cancel(nil)
		wg.Wait()
	}
}

// originsKey is the context key of the calls in flight when a server
// request that arrived outside any call came (RequestContext).
type originsKey struct{}

// Origins returns the contexts of the calls that a server request whose
// handler runs in ctx (RequestContext) may belong to, for their values:
// the call it was fulfilled within (a 2026-07-28 input request, a -32042
// URL elicitation), else every call that was in flight on the session
// when it arrived (a legacy server request does not name its call), and
// none when no call was.
func Origins(ctx context.Context) []context.Context {
	if calls, ok := ctx.Value(originsKey{}).([]*Call); ok {
		out := make([]context.Context, len(calls))
		for i, cl := range calls {
			out[i] = cl.ctx
		}
		return out
	}
	if cl, ok := FromContext(ctx); ok {
		return []context.Context{cl.ctx}
	}
	return nil
}
