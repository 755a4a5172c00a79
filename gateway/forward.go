//lint:file-ignore SA1019 roots, sampling and logging are deprecated from 2026-07-28 on (SEP-2577); agentmcp speaks the earlier eras too, which have them

package gateway

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/mcpclient/input"
	"github.com/agentmcp/agentmcp/policy"
)

// downstreamCall is a tool call in flight from a downstream client: where
// the upstream server's requests for input made during it go.
type downstreamCall struct {
	session *mcp.ServerSession
	// caps and pending are a 2026-07-28 client's: the capabilities its
	// request declared, and the call it may be asked for input on.
	caps    *mcp.ClientCapabilities
	pending *pendingCall
}

type downstreamKey struct{}

// canElicit reports whether the client of the call takes elicitation
// requests of mode: a session (2025-11-25 or before; a 2026-07-28 request
// has no channel for them) that declared the mode.
func (c *downstreamCall) canElicit(mode string) bool {
	caps := c.capabilities()
	if caps == nil || caps.Elicitation == nil {
		return false
	}
	e := caps.Elicitation
	switch mode {
	case "url":
		return e.URL != nil
	default: // form; neither mode declared means form
		return e.Form != nil || e.URL == nil
	}
}

// canSample reports whether the client of the call takes sampling
// requests.
func (c *downstreamCall) canSample() bool {
	caps := c.capabilities()
	return caps != nil && caps.Sampling != nil
}

// capabilities returns what the client can be asked: a session's
// handshake, or what a 2026-07-28 call declared (asked through the
// call's results); nil for a request without either.
func (c *downstreamCall) capabilities() *mcp.ClientCapabilities {
	if c == nil {
		return nil
	}
	if c.pending != nil {
		return c.caps
	}
	if c.session == nil || c.session.ID() == "" {
		return nil
	}
	p := c.session.InitializeParams()
	if p == nil || p.ProtocolVersion >= firstStateless {
		return nil
	}
	return p.Capabilities
}

// stateless reports whether the session is a 2026-07-28 request's.
func stateless(ss *mcp.ServerSession) bool {
	if ss == nil {
		return false
	}
	p := ss.InitializeParams()
	return p == nil || p.ProtocolVersion >= firstStateless
}

// callerOf returns the downstream call a request for input belongs to, or
// nil. The request's context names the calls it may belong to
// (mcpclient.RequestOrigins): the call it was made in (2026-07-28 upstream
// servers ask within the call), else every call in flight on the server's
// session when it came (a 2025-11-25 server's request does not say which
// call it is for). It goes to a downstream client only when all of them
// are that client's and the client takes it (takes); a call of anyone
// else in flight (the agent's API or dashboard, the agent's own work,
// another client) or none at all leaves it to the agent's handlers rather
// than to a client that may not be the one asked.
func (g *Gateway) callerOf(ctx context.Context, takes func(*downstreamCall) bool) *downstreamCall {
	var caller *downstreamCall
	for _, o := range mcpclient.RequestOrigins(ctx) {
		c, ok := o.Value(downstreamKey{}).(*downstreamCall)
		if !ok {
			return nil
		}
		switch {
		case caller == nil:
			caller = c
		case c == caller:
		case c.pending != nil || caller.pending != nil || c.session == nil || c.session != caller.session:
			return nil // two clients' calls
		}
	}
	if caller == nil || !takes(caller) || g.isClosed() {
		return nil
	}
	return caller
}

// callTool returns the handler of a tool: the call forwarded to the
// server, with its progress passed back and its cancellation passed on.
func (g *Gateway) callTool(serverID, name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var caps *mcp.ClientCapabilities
		statelessEra := stateless(req.Session)
		if statelessEra {
			caps = statelessCaps(req.Params.Meta)
		}
		if req.Extra != nil && req.Extra.TokenInfo != nil {
			ctx = withDecider(ctx, req.Extra.TokenInfo.UserID) // decider.go
		}
		return g.forward(ctx, req.Session, statelessEra, caps, req.Params, serverID, name)
	}
}

// forward runs a downstream client's tools/call of tool name of serverID:
// the one code of both ways a call comes in, go-sdk's server (callTool)
// and the gateway's own answer (fastpath.go). ss is the client's session,
// nil for a call the gateway answers itself in 2026-07-28; statelessEra
// tells a 2026-07-28 call, and caps are then the capabilities its _meta
// declares (nil for none).
func (g *Gateway) forward(ctx context.Context, ss *mcp.ServerSession, statelessEra bool, caps *mcp.ClientCapabilities, p *mcp.CallToolParamsRaw, serverID, name string) (*mcp.CallToolResult, error) {
	ctx = agent.WithCaller(ctx, policy.Gateway) // the agent's policy decides for this caller
	ctx = withDecider(ctx, subjectOf(ctx))      // decider.go: who answers an ask, in OAuth mode
	if !g.exposed(serverID, name) {
		g.a.AuditRefused(ctx, serverID, name, p.Arguments, agent.DeniedError(serverID, name, policy.Gateway,
			policy.Decision{Action: policy.Deny, Rule: -1, Reason: "not exposed by the gateway"})) // the agent's audit log
		return toolError(fmt.Sprintf("tool %q of MCP server %q is not exposed", name, serverID)), nil
	}
	var args any
	if raw := p.Arguments; len(raw) > 0 && string(raw) != "null" {
		args = raw
	}
	c := &downstreamCall{session: ss}
	ctx = agent.WithApprovalAsker(ctx, g.approvalAsker(c)) // approvals.go: an ask goes to the client too
	if statelessEra {
		if p.RequestState != "" ||
			(caps != nil && (caps.Elicitation != nil || caps.Sampling != nil)) {
			c.caps = caps
			return g.callStateless(ctx, p, c, serverID, name, args)
		}
	}
	ctx = context.WithValue(ctx, downstreamKey{}, c)
	var opts *mcpclient.CallOptions
	if token := p.GetProgressToken(); token != nil && ss != nil {
		pr := newProgress(ctx, ss, token)
		defer pr.stop()
		opts = &mcpclient.CallOptions{Progress: pr.send}
	}
	res, err := g.a.CallTool(ctx, serverID, name, args, opts)
	switch {
	case err == nil:
		return ownResult(res), nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	}
	// The call did not complete (the server went away during it, or
	// asks for authorisation): a result the model can read.
	return toolError(fmt.Sprintf("calling tool %q on MCP server %q failed: %v", name, serverID, err)), nil
}

// ownResult is an upstream server's tool result made the gateway's own:
// its exported fields only, since the result type a 2026-07-28 server's
// result was decoded with is the downstream era's to set (none in a
// session), and without the upstream server's info in _meta, where the
// gateway's goes for a 2026-07-28 client.
func ownResult(res *mcp.CallToolResult) *mcp.CallToolResult {
	if res == nil {
		return nil
	}
	r := &mcp.CallToolResult{
		Meta:              res.Meta,
		Content:           res.Content,
		StructuredContent: res.StructuredContent,
		IsError:           res.IsError,
		InputRequests:     res.InputRequests,
		RequestState:      res.RequestState,
	}
	r.Meta = withoutServerInfo(r.Meta)
	return r
}

// withoutServerInfo returns meta without an upstream server's info, which
// is not the gateway's to pass on (go-sdk's server puts the gateway's own
// there for a 2026-07-28 client).
func withoutServerInfo(meta mcp.Meta) mcp.Meta {
	if _, ok := meta[mcp.MetaKeyServerInfo]; !ok {
		return meta
	}
	meta = maps.Clone(meta)
	delete(meta, mcp.MetaKeyServerInfo)
	if len(meta) == 0 {
		meta = nil
	}
	return meta
}

func toolError(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

// getPrompt returns the handler of a prompt.
func (g *Gateway) getPrompt(serverID, name string) mcp.PromptHandler {
	return func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		if !g.exposed(serverID, "") {
			return nil, fmt.Errorf("prompt %q is not exposed", req.Params.Name)
		}
		res, err := g.a.GetPrompt(ctx, serverID, name, req.Params.Arguments)
		if err != nil || res == nil {
			return res, err
		}
		// Made the gateway's own, as ownResult does for a tool's.
		return &mcp.GetPromptResult{Meta: withoutServerInfo(res.Meta), Description: res.Description, Messages: res.Messages}, nil
	}
}

// readResource returns the handler of a server's resources and templates.
func (g *Gateway) readResource(serverID string) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		if !g.exposed(serverID, "") {
			return nil, mcp.ResourceNotFoundError(req.Params.URI)
		}
		uri := req.Params.URI
		if up, ok := upstreamViewURI(serverID, uri); ok {
			uri = up // a view's URI, the gateway's (apps.go)
		}
		res, err := g.a.ReadResource(ctx, serverID, uri)
		if err != nil || res == nil {
			return res, err
		}
		// Made the gateway's own, as ownResult does for a tool's; the
		// server's cache hints stay (a 2025-11-25 session gets none:
		// legacyShapes).
		return &mcp.ReadResourceResult{Meta: withoutServerInfo(res.Meta), Contents: viewContents(serverID, res.Contents), Cacheable: res.Cacheable}, nil
	}
}

// progress passes a call's progress notifications to the downstream
// client, in order, off the upstream connection's reading goroutine. A
// client that does not keep up misses some (progress is advisory), never
// holds the upstream connection back.
type progress struct {
	ctx     context.Context
	session *mcp.ServerSession
	token   any
	done    chan struct{}

	// mu guards the fields below.
	mu      sync.Mutex
	queue   chan *mcp.ProgressNotificationParams
	stopped bool
}

func newProgress(ctx context.Context, ss *mcp.ServerSession, token any) *progress {
	p := &progress{ctx: ctx, session: ss, token: token, done: make(chan struct{}),
		queue: make(chan *mcp.ProgressNotificationParams, 32)}
	go p.run()
	return p
}

func (p *progress) send(n *mcp.ProgressNotificationParams) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	select {
	case p.queue <- n:
	default:
	}
}

func (p *progress) run() {
	defer close(p.done)
	for n := range p.queue {
		err := p.session.NotifyProgress(p.ctx, &mcp.ProgressNotificationParams{
			ProgressToken: p.token, Progress: n.Progress, Total: n.Total, Message: n.Message})
		if err != nil {
			for range p.queue {
			}
			return
		}
	}
}

// stop ends the forwarding once what was queued is sent: before the
// call's result.
func (p *progress) stop() {
	p.mu.Lock()
	if !p.stopped {
		p.stopped = true
		close(p.queue)
	}
	p.mu.Unlock()
	<-p.done
}

// installHandlers takes over the agent's elicitation and sampling
// handlers: a request for input goes to the downstream client of the
// call it belongs to when that client takes it, else to the fallback
// (Options.Elicitation and Sampling, by default the handlers in place
// before, which Close puts back).
func (g *Gateway) installHandlers() {
	g.restoreElicit, g.restoreSample = g.a.ElicitationHandlers(), g.a.SamplingHandler()
	g.fallbackElicit, g.fallbackSample = g.opts.Elicitation, g.opts.Sampling
	if g.fallbackElicit == nil {
		g.fallbackElicit = g.restoreElicit
	}
	if g.fallbackSample == nil {
		g.fallbackSample = g.restoreSample
	}
	if g.fallbackElicit == nil {
		g.fallbackElicit = &input.ElicitationHandlers{}
	}
	h := *g.fallbackElicit
	h.Form = g.elicit("form", g.fallbackElicit.Form)
	h.URL = g.elicit("url", g.fallbackElicit.URL)
	g.a.ConfigureElicitationHandlers(&h)
	g.a.ConfigureSampling(g.sample)
}

// errNoClient is the error of a request for input that neither a
// downstream client nor the agent can answer.
var errNoClient = errors.New("no client that takes this request is connected to the MCP gateway, and the agent has no handler for it")

func (g *Gateway) elicit(mode string, fallback func(context.Context, *input.ElicitationRequest, string) (*mcp.ElicitResult, error)) func(context.Context, *input.ElicitationRequest, string) (*mcp.ElicitResult, error) {
	return func(ctx context.Context, req *input.ElicitationRequest, serverID string) (*mcp.ElicitResult, error) {
		if c := g.callerOf(ctx, func(c *downstreamCall) bool { return c.canElicit(mode) }); c != nil {
			params := *req.Params
			params.Mode = mode
			params.Meta = nil
			return g.askClient(ctx, c, &params) // approvals.go
		}
		if fallback != nil {
			return fallback(ctx, req, serverID)
		}
		return nil, errNoClient
	}
}

func (g *Gateway) sample(ctx context.Context, req *mcp.CreateMessageParams, serverID string) (*mcp.CreateMessageResult, error) {
	if c := g.callerOf(ctx, (*downstreamCall).canSample); c != nil {
		params := *req
		params.Meta = nil
		if c.pending != nil {
			r, err := c.pending.ask(ctx, &params)
			if err != nil {
				return nil, fmt.Errorf("asking the MCP gateway's client: %w", err)
			}
			switch res := r.(type) {
			case *mcp.CreateMessageResult:
				return res, nil
			case *mcp.CreateMessageWithToolsResult:
				return &mcp.CreateMessageResult{Meta: res.Meta, Model: res.Model, Role: res.Role, StopReason: res.StopReason, Content: firstContent(res.Content)}, nil
			}
			return nil, fmt.Errorf("the MCP gateway's client answered a sampling request with %T", r)
		}
		res, err := c.session.CreateMessage(ctx, &params)
		if err != nil {
			return nil, fmt.Errorf("asking the MCP gateway's client: %w", err)
		}
		return res, nil
	}
	if g.fallbackSample != nil {
		return g.fallbackSample(ctx, req, serverID)
	}
	return nil, errNoClient
}

func (g *Gateway) isClosed() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.closed
}

func firstContent(cs []mcp.Content) mcp.Content {
	if len(cs) == 0 {
		return nil
	}
	return cs[0]
}
