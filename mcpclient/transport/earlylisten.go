package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"mime"
	"sync"
	"time"

	"github.com/agentmcp/agentmcp/internal/jsonrpcwire"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A 2026-07-28 client hears of list changes on a subscriptions/listen
// stream, and must hear its acknowledgment before it lists: the server
// takes no note of the client until then, so a change made between a list
// and the subscription would reach nobody. go-sdk's Connect sends the
// listen after server/discover has answered, and the client lists once
// the listen is acknowledged: three round trips one after the other.
//
// With Streamable.EarlyListen, the connection sends the listen beside
// server/discover instead, once discover is written, so that the server
// reads discover, the connect's critical path, first. The specification
// lets a client send any request without discovering first, and the
// server leaves out of its acknowledgment what it does not offer. When go-sdk then writes its own
// listen, for a subset of what the early one asked, with the same _meta,
// the early stream stands for it: the write returns once the early stream
// is acknowledged (its notifications/subscriptions/acknowledged read), and
// the lists that follow are still taken after the subscription. The
// listen's round trip then overlaps discover's rather than following it.
// An early listen that nobody claims (a server offering no list changes, a
// legacy server, a negotiation that changed the version) is closed: by the
// handshake's end (SetNegotiatedVersion), or the legacy initialize.

// earlyListenID is the JSON-RPC id of an early listen: go-sdk numbers its
// requests, and the Manager's direct requests are "agentmcp-N".
var earlyListenID, _ = jsonrpc.MakeID("agentmcp-listen")

// earlyListen is a subscriptions/listen sent beside server/discover.
type earlyListen struct {
	req    *jsonrpc.Request
	meta   json.RawMessage // its _meta: discover's
	filter mcp.NotificationSubscriptions
	cancel context.CancelFunc
	call   Call // its answer, re-addressed to the claimer's id

	// up is closed once the stream is acknowledged, or failed.
	up chan struct{}

	// mu guards the fields below.
	mu      sync.Mutex
	open    bool       // its stream's head came
	acked   bool       // the acknowledgment was read
	done    bool       // up is closed
	claimed jsonrpc.ID // the id of the listen that claimed it, once claimed
}

// settle records whether the stream was acknowledged, once.
func (e *earlyListen) settle(acked bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.done {
		e.done, e.acked = true, acked
		close(e.up)
	}
}

// startEarlyListen sends, on a goroutine Close waits for, a
// subscriptions/listen with discover's _meta and the filter of
// Streamable.EarlyListen, unless one with the same _meta is under way. An
// early listen with another _meta (a negotiation's second discover) is
// closed. It reports whether one is under way.
func (c *streamableConn) startEarlyListen(discover *jsonrpc.Request) bool {
	if c.earlyFilter == nil {
		return false
	}
	var p struct {
		Meta json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(discover.Params, &p) != nil || len(p.Meta) == 0 {
		return false
	}
	c.mu.Lock()
	if e := c.early; e != nil {
		if bytes.Equal(e.meta, p.Meta) {
			c.mu.Unlock()
			return true
		}
		c.early = nil
		e.cancel()
	}
	c.mu.Unlock()
	params, err := json.Marshal(struct {
		Meta          json.RawMessage                `json:"_meta"`
		Notifications *mcp.NotificationSubscriptions `json:"notifications"`
	}{p.Meta, c.earlyFilter})
	if err != nil {
		return false
	}
	ctx, cancel := context.WithCancel(c.ctx)
	e := &earlyListen{
		req:    &jsonrpc.Request{ID: earlyListenID, Method: "subscriptions/listen", Params: params},
		meta:   p.Meta,
		filter: *c.earlyFilter,
		cancel: cancel,
		up:     make(chan struct{}),
	}
	e.call.answer = func(resp *jsonrpc.Response) { c.answerEarly(e, resp) }
	e.call.heard = func(msg jsonrpc.Message) {
		if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "notifications/subscriptions/acknowledged" {
			e.settle(true)
		}
	}
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		cancel()
		return false
	}
	c.early = e
	c.mu.Unlock()
	if !c.goStream(func() { c.runEarlyListen(ctx, e) }) {
		cancel()
		return false
	}
	return true
}

// runEarlyListen sends e's listen and reads its stream. A refusal, or a
// stream that ends before its acknowledgment, is only logged: the listen
// go-sdk writes then goes out itself, and meets it. Once acknowledged, the
// stream is read as go-sdk's listen's is (readCallStream): one that ends
// without its response is issued again (listen.go). e.cancel, not the
// return of this function, ends it: a listen issued again reads its
// stream on a goroutine of its own.
func (c *streamableConn) runEarlyListen(ctx context.Context, e *earlyListen) {
	defer e.settle(false)
	data, err := jsonrpc.EncodeMessage(e.req)
	if err != nil {
		return
	}
	c.counter.Sent(len(data))
	out := outgoing{summary: e.req.Method, call: e.req, cl: &e.call}
	resp, err := c.post(ctx, ctx, e.req, out, data)
	if err != nil {
		c.logger.Debug("early subscriptions/listen refused", "error", err)
		return
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		// An answer at once (an error, or nothing to listen for): the
		// listen go-sdk writes, if any, hears it itself.
		resp.Body.Close()
		c.logger.Debug("early subscriptions/listen answered at once", "content-type", resp.Header.Get("Content-Type"))
		return
	}
	e.mu.Lock()
	e.open = true
	e.mu.Unlock()
	resp.Header = nil // the stream holds only what it needs (readCallStream)
	r := c.processStream(ctx, resp.Body, e.req.ID, &e.call, true)
	resp.Body.Close()
	e.mu.Lock()
	acked := e.acked
	e.mu.Unlock()
	switch {
	case !acked || r.answered || ctx.Err() != nil:
	case r.err != nil && !isStreamBreak(r.err):
		c.reply(&e.call, &jsonrpc.Response{ID: e.req.ID, Error: r.err})
	case !r.cancelled:
		c.relisten(ctx, e.req, r.events > 0)
	}
}

// answerEarly hands the response that ends e's stream to the listen that
// claimed it, under that listen's id; unclaimed, it is dropped.
func (c *streamableConn) answerEarly(e *earlyListen, resp *jsonrpc.Response) {
	e.settle(false)
	e.mu.Lock()
	id := e.claimed
	e.mu.Unlock()
	if !id.IsValid() {
		return
	}
	r := *resp
	jsonrpcwire.Own(&r)
	r.ID = id
	c.deliver(&r)
}

// claimEarlyListen lets the early listen stand for call, a
// subscriptions/listen go-sdk writes, when it asked for at least what call
// asks with the same _meta: it waits for the early stream's
// acknowledgment and reports true once it came. It reports false, the
// early listen closed, when there is none to claim or it failed: call is
// then sent as it is.
func (c *streamableConn) claimEarlyListen(ctx context.Context, call *jsonrpc.Request) (bool, error) {
	c.mu.Lock()
	e := c.early
	c.early = nil // claimed once, or closed below
	c.mu.Unlock()
	if e == nil {
		return false, nil
	}
	var p struct {
		Meta          json.RawMessage            `json:"_meta"`
		Notifications map[string]json.RawMessage `json:"notifications"`
	}
	if json.Unmarshal(call.Params, &p) != nil || !bytes.Equal(p.Meta, e.meta) || !covers(&e.filter, p.Notifications) {
		e.cancel()
		return false, nil
	}
	e.mu.Lock()
	e.claimed = call.ID
	e.mu.Unlock()
	t := time.NewTimer(ackWait)
	defer t.Stop()
	select {
	case <-e.up:
	case <-t.C:
	case <-ctx.Done():
		e.cancel()
		return false, ctx.Err()
	}
	e.mu.Lock()
	acked, open := e.acked, e.open
	e.mu.Unlock()
	switch {
	case acked:
		return true, nil
	case open && !e.settled():
		// A server that never acknowledges (against the specification)
		// is not waited for longer than a legacy GET stream's opening
		// (awaitStandalone): its stream is open.
		c.logger.Debug("subscriptions/listen not acknowledged; going on", "waited", ackWait)
		return true, nil
	}
	e.cancel()
	return false, nil
}

// ackWait bounds the wait for an early listen's acknowledgment.
const ackWait = 2 * time.Second

// settled reports whether up is closed.
func (e *earlyListen) settled() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.done
}

// dropEarlyListen closes an early listen nobody claimed.
func (c *streamableConn) dropEarlyListen() {
	c.mu.Lock()
	e := c.early
	c.early = nil
	c.mu.Unlock()
	if e != nil {
		e.cancel()
	}
}

// covers reports whether have asks for every notification want, a
// listen's filter, asks for. A filter with anything but the three list
// changes (resources, an extension's notifications) is never covered.
func covers(have *mcp.NotificationSubscriptions, want map[string]json.RawMessage) bool {
	for k, v := range want {
		var on bool
		switch k {
		case "toolsListChanged":
			on = have.ToolsListChanged
		case "promptsListChanged":
			on = have.PromptsListChanged
		case "resourcesListChanged":
			on = have.ResourcesListChanged
		default:
			return false
		}
		if !on && string(v) != "false" {
			return false
		}
	}
	return true
}
