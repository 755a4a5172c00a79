package gateway

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/mcpclient"
)

// A 2026-07-28 client has no session for the gateway to send requests
// on: a call that needs the client's input returns an input-required
// result (the requests, and a state to echo), and the client calls again
// with its answers (SEP-2322, multi-round-trip). The upstream call goes on
// meanwhile, detached from the client's HTTP requests, as a pendingCall.

// DefaultInputTimeout is Options.InputTimeout's default.
const DefaultInputTimeout = 2 * time.Minute

// pendingCall is a 2026-07-28 client's call in flight upstream.
type pendingCall struct {
	asks   chan *inputAsk     // requests for input from the upstream server
	done   chan callOutcome   // the call's end (capacity 1)
	cancel context.CancelFunc // cancels the upstream call
	asked  *inputAsk          // the request the client was sent, awaiting its answer
	timer  *time.Timer        // cancels a call the client abandoned

	// sinkMu guards sink: where the call's progress goes, the client's
	// request waiting on the call now (the first, or a retry) if it
	// asked for progress.
	sinkMu sync.Mutex
	sink   *progress
}

// progress passes the upstream call's progress to the client's request
// waiting on it, if any.
func (p *pendingCall) progress(n *mcp.ProgressNotificationParams) {
	p.sinkMu.Lock()
	sink := p.sink
	p.sinkMu.Unlock()
	if sink != nil {
		sink.send(n)
	}
}

func (p *pendingCall) setSink(sink *progress) {
	p.sinkMu.Lock()
	p.sink = sink
	p.sinkMu.Unlock()
}

type callOutcome struct {
	res *mcp.CallToolResult
	err error
}

// inputAsk is one request for input of the upstream server, and where
// its answer goes.
type inputAsk struct {
	req   mcp.InputRequest
	reply chan mcp.InputResponse // capacity 1
}

// statelessCaps returns the capabilities a 2026-07-28 request declares in
// its _meta, or nil.
func statelessCaps(meta mcp.Meta) *mcp.ClientCapabilities {
	raw, ok := meta[mcp.MetaKeyClientCapabilities]
	if !ok {
		return nil
	}
	data, err := json.Marshal(raw)
	if err != nil {
		return nil
	}
	var caps mcp.ClientCapabilities
	if json.Unmarshal(data, &caps) != nil {
		return nil
	}
	return &caps
}

// ask sends a request for input to the client of a pending call and waits
// for its answer.
func (p *pendingCall) ask(ctx context.Context, req mcp.InputRequest) (mcp.InputResponse, error) {
	a := &inputAsk{req: req, reply: make(chan mcp.InputResponse, 1)}
	select {
	case p.asks <- a:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case r := <-a.reply:
		return r, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// callStateless runs a 2026-07-28 client's call that may need its input:
// a first call starts the upstream call, a retry (with a request state)
// brings the answer to the request it was sent.
func (g *Gateway) callStateless(ctx context.Context, params *mcp.CallToolParamsRaw, c *downstreamCall, serverID, name string, args any) (*mcp.CallToolResult, error) {
	// This request's progress token gets the call's progress while the
	// request waits on it (set before the call starts or resumes).
	var pr *progress
	if token := params.GetProgressToken(); token != nil && c.session != nil {
		pr = newProgress(ctx, c.session, token)
	}
	var p *pendingCall
	defer func() {
		if pr != nil {
			if p != nil {
				p.setSink(nil)
			}
			pr.stop()
		}
	}()
	if state := params.RequestState; state != "" {
		p = g.takePending(state)
		if p == nil {
			return toolError(fmt.Sprintf("the call of tool %q on MCP server %q that asked for this input is over (it waited too long, or the gateway closed); call the tool again", name, serverID)), nil
		}
		var answer mcp.InputResponse
		for _, r := range params.InputResponses {
			answer = r
		}
		if answer == nil {
			p.cancel()
			return toolError("the retry carries no answer to the request for input"), nil
		}
		if pr != nil {
			p.setSink(pr)
		}
		p.asked.reply <- answer
		p.asked = nil
	} else {
		callCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		p = &pendingCall{asks: make(chan *inputAsk), done: make(chan callOutcome, 1), cancel: cancel, sink: pr}
		c.pending = p
		callCtx = context.WithValue(callCtx, downstreamKey{}, c)
		g.mu.Lock()
		if g.closed {
			g.mu.Unlock()
			cancel()
			return toolError("the MCP gateway is closing"), nil
		}
		g.wg.Go(func() {
			stop := context.AfterFunc(g.ctx, cancel)
			defer stop()
			res, err := g.a.CallTool(callCtx, serverID, name, args, &mcpclient.CallOptions{Progress: p.progress})
			p.done <- callOutcome{res, err}
		})
		g.mu.Unlock()
	}
	select {
	case o := <-p.done:
		p.cancel()
		if o.err != nil {
			return toolError(fmt.Sprintf("calling tool %q on MCP server %q failed: %v", name, serverID, o.err)), nil
		}
		return ownResult(o.res), nil
	case a := <-p.asks:
		p.asked = a
		state, err := g.putPending(p)
		if err != nil {
			p.cancel()
			return nil, err
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"input": a.req}, RequestState: state}, nil
	case <-ctx.Done():
		p.cancel()
		return nil, ctx.Err()
	}
}

// PendingInputs reports how many 2026-07-28 calls wait for their client
// to come back with its input (each keeps its upstream call, and so the
// agent, busy until then, at most Options.InputTimeout).
func (g *Gateway) PendingInputs() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.pending)
}

// putPending keeps p until the client comes back with state, at most
// Options.InputTimeout.
func (g *Gateway) putPending(p *pendingCall) (string, error) {
	state := rand.Text()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return "", errors.New("the MCP gateway is closing")
	}
	g.pending[state] = p
	p.timer = time.AfterFunc(g.opts.InputTimeout, func() {
		if g.takePending(state) != nil {
			p.cancel()
		}
	})
	return state, nil
}

// takePending removes and returns the pending call of state, or nil.
func (g *Gateway) takePending(state string) *pendingCall {
	g.mu.Lock()
	defer g.mu.Unlock()
	p, ok := g.pending[state]
	if !ok {
		return nil
	}
	delete(g.pending, state)
	p.timer.Stop()
	return p
}
