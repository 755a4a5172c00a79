//lint:file-ignore SA1019 roots, sampling and logging are deprecated from 2026-07-28 on (SEP-2577); agentmcp speaks the earlier eras too, which have them

package mcpclient

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/agentmcp/agentmcp/mcpclient/input"
	"github.com/agentmcp/agentmcp/mcpclient/internal/inbound"
	"github.com/agentmcp/agentmcp/mcpclient/internal/inflight"
	"github.com/agentmcp/agentmcp/mcpclient/internal/roots"
	"github.com/agentmcp/agentmcp/mcpclient/internal/telemetry"
	"github.com/agentmcp/agentmcp/mcpclient/internal/urlelicit"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file builds the go-sdk client of each session with what the
// application configured on the Manager: elicitation handlers
// (elicitation.go), a sampling handler (sampling.go) and roots (roots.go).
//
// Handlers are looked up when a request arrives, so changing them applies
// to live sessions at once. What a session advertises is decided when its
// client is built, from what is configured then, and does not change until
// the next session.

// managerHooks is what the application configured on the Manager.
type managerHooks struct {
	// elicit is nil until ConfigureElicitationHandlers is first called;
	// until then a server's elicitation seed is advertised.
	elicit   atomic.Pointer[input.ElicitationHandlers]
	sampling atomic.Pointer[input.SamplingHandler]

	// rootsMu guards roots. It is held while a client is built, so that a
	// client either starts with the new roots or is synced to them.
	rootsMu sync.Mutex
	roots   []*mcp.Root // nil means not set: not advertised

	// inputs counts the requests for input waiting for their answer
	// (limits.go).
	inputs inbound.Inputs
}

// serverHooks is a registered server's part: its elicitation seed, and the newest
// client built for it (which may not be installed yet).
type serverHooks struct {
	// mu guards the fields below. It is a leaf lock.
	mu        sync.Mutex
	seedSpent bool          // a session advertised the seed successfully
	latest    *sessionHooks // of the newest session built

	inputs inbound.ServerInputs // requests for input waiting; guarded by managerHooks.inputs
}

// sessionHooks is one session's go-sdk client and what it advertised.
type sessionHooks struct {
	c        *server
	s        *session
	client   *mcp.Client
	caps     *mcp.ClientCapabilities // advertised; never mutated
	seeded   bool                    // caps.Elicitation is the connection's seed
	seedUsed atomic.Bool             // a request of the seeded session succeeded
	directID atomic.Int64            // the last id of a request sent by directMiddleware
	// reqMeta is the request _meta go-sdk adds to every request of a
	// 2026-07-28 session (protocol version, client info, capabilities:
	// fixed for the session's client), as directMiddleware first saw it;
	// listPage sends the session's lists with it (direct.go).
	reqMeta atomic.Pointer[requestMeta]
	send    mcp.MethodHandler  // the sending middleware without go-sdk's session (direct.go)
	tel     *telemetry.Session // its telemetry attributes (telemetry.go)
	roots   *roots.Syncer      // keeps the client's roots current (roots.go)

	calls       inflight.Calls        // requests in flight
	completions urlelicit.Completions // URL elicitations awaiting notifications/elicitation/complete
}

// buildClient finishes the client options of a new session s, builds the
// client and installs the middleware. newClient (server.go) calls it.
func (c *server) buildClient(s *session, opts *mcp.ClientOptions) *mcp.Client {
	m := c.m
	h := &sessionHooks{c: c, s: s, tel: c.telemetrySession(s)}
	s.hooks = h
	caps := opts.Capabilities
	if caps == nil {
		caps = &mcp.ClientCapabilities{}
	}
	caps.Elicitation, h.seeded = c.elicitationToAdvertise()
	if caps.Elicitation != nil {
		opts.ElicitationHandler = h.elicit
	}
	opts.ElicitationCompleteHandler = h.elicitationComplete
	if m.hooks.sampling.Load() != nil {
		caps.Sampling = &mcp.SamplingCapabilities{}
		opts.CreateMessageHandler = h.createMessage
	}

	m.hooks.rootsMu.Lock()
	defer m.hooks.rootsMu.Unlock()
	list := m.hooks.roots
	if list != nil {
		caps.RootsV2 = &mcp.RootCapabilities{ListChanged: true}
	}
	opts.Capabilities = caps
	h.caps = cloneCaps(caps)
	h.client = mcp.NewClient(m.clientInfo, opts)
	registerTaskMethods(h.client)
	sending := []mcp.Middleware{h.callMiddleware, h.urlElicitations(), h.directMiddleware}
	h.client.AddSendingMiddleware(sending...)
	h.client.AddReceivingMiddleware(h.requestLimits(), h.rootsMiddleware)
	if !m.tel.Off() {
		// Added last, they wrap the others: one span per request, however
		// many rounds it takes. The server's figures of its tool calls
		// (serverstats.go) are recorded with the instrument's.
		traced := m.tel.Sending(h.tel, c.recordCall)
		h.client.AddSendingMiddleware(traced)
		h.client.AddReceivingMiddleware(m.tel.Receiving(h.tel))
		sending = slices.Insert(sending, 0, traced)
	}
	h.send = overNothing(sending)
	h.roots = roots.NewSyncer(h.client, list, m.currentRoots, m.goBackground)
	c.hooks.mu.Lock()
	c.hooks.latest = h
	c.hooks.mu.Unlock()
	return h.client
}

// callMiddleware tracks the requests in flight (for the contexts of server
// requests, see requestCtx, and their multi round-trip retries), spends
// the elicitation seed once the server has accepted a request of a seeded
// session, and keeps lists and results obtained through multi round-trip
// retries out of go-sdk's cache.
func (h *sessionHooks) callMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if strings.HasPrefix(method, "notifications/") {
			return next(ctx, method, req)
		}
		callCtx, cl := h.calls.Begin(ctx)
		defer func() { h.calls.End(cl, ctx.Err() != nil) }()

		if mayTakeInput(method) && isModern(req) {
			// Input requests for roots are answered from the client's roots.
			if err := h.roots.Wait(ctx); err != nil {
				return nil, err
			}
		}
		res, err := next(callCtx, method, req)
		if err == nil && h.seeded && method != "initialize" && method != "server/discover" && !h.seedUsed.Swap(true) {
			// The server accepted a request of the seeded session (a
			// resumed session's handshake is answered locally, so the
			// handshake proves nothing).
			h.c.spendSeed()
		}
		if err != nil {
			return res, err
		}
		// go-sdk caches list and resources/read results of 2026-07-28
		// sessions for their ttlMs; a zero TTL is never served from the
		// cache. The results are fresh, not shared yet.
		switch r := res.(type) {
		case *mcp.ReadResourceResult:
			if cl.Retried() {
				// It took input: the spec forbids caching it (caching.mdx).
				r.TTLMs = 0
			}
		// The Manager's catalog is the cache of the lists, kept fresh by
		// list_changed (which also clears go-sdk's); a list fetched again
		// is a refresh asked for (DiscoverIfConnected), which a cached
		// page would silently void.
		case *mcp.ListToolsResult:
			r.TTLMs = 0
		case *mcp.ListPromptsResult:
			r.TTLMs = 0
		case *mcp.ListResourcesResult:
			r.TTLMs = 0
		case *mcp.ListResourceTemplatesResult:
			r.TTLMs = 0
		}
		return res, nil
	}
}

// mayTakeInput reports whether a 2026-07-28 server may answer method with
// input requests.
func mayTakeInput(method string) bool {
	return method == "tools/call" || method == "prompts/get" || method == "resources/read"
}

// isModern reports whether req belongs to a 2026-07-28 session.
func isModern(req mcp.Request) bool {
	cs, ok := req.GetSession().(*mcp.ClientSession)
	if !ok || cs == nil {
		return false
	}
	init := cs.InitializeResult()
	return init != nil && init.ProtocolVersion >= protocolModern
}

// requestCtx returns the context for a handler of a server request
// (elicitation, sampling), and a function to call when the handler
// returns: the context ends with the Manager, and with the call that
// caused the request (inflight.Calls.RequestContext).
func (h *sessionHooks) requestCtx(ctx context.Context) (context.Context, func()) {
	return h.calls.RequestContext(ctx, h.c.m.ctx, ErrClosed)
}

// RequestOrigins returns, in a handler of a server's request for input
// (elicitation or sampling, in the context the Manager gives it), the
// contexts of the calls the request may belong to, for their values (a
// caller's own marks): the call it arrived within (a 2026-07-28 input
// request, a URL elicitation a call's error asked for), else every request
// that was in flight on the server's session when it arrived (a legacy
// server request does not name its call: exactly one means that one), and
// none when nothing was in flight. A layer that serves several callers
// (package gateway) routes the request to the caller of the call when all
// of them are that caller's, and to its own handlers otherwise.
func RequestOrigins(ctx context.Context) []context.Context { return inflight.Origins(ctx) }

// clientInfoLocked fills in what ServerInfo says about the client side.
// The caller holds c.mu.
func (c *server) clientInfoLocked(si *ServerInfo) {
	if s := c.sess; s != nil && s.hooks != nil {
		si.Advertised = cloneCaps(s.hooks.caps)
	}
	si.Elicitation, _ = c.elicitationToAdvertise()
}

func cloneCaps(caps *mcp.ClientCapabilities) *mcp.ClientCapabilities {
	if caps == nil {
		return nil
	}
	cp := *caps
	cp.Experimental = maps.Clone(caps.Experimental)
	cp.Extensions = maps.Clone(caps.Extensions)
	if caps.RootsV2 != nil {
		r := *caps.RootsV2
		cp.RootsV2 = &r
	}
	if caps.Sampling != nil {
		s := *caps.Sampling
		cp.Sampling = &s
	}
	cp.Elicitation = cloneElicitation(caps.Elicitation)
	return &cp
}
