package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/internal/protocol"
	"github.com/agentmcp/agentmcp/mcpclient/input"
)

// ExposeFunc decides what of an agent a Gateway exposes. It is called with
// a server id and an empty tool name to ask about the server as a whole (a
// server refused this way shows nothing: no tools, prompts, resources or
// templates), and with a server id and a tool's MCP name (not its gateway
// name) to ask about that tool of an exposed server. A tool refused is
// neither listed nor callable: a call by its gateway name is refused.
//
// It is called on every catalog rebuild and again before every call, from
// several goroutines at once: it must be safe for concurrent use, quick,
// and must not block or call the Gateway. After the rules behind it change,
// call Gateway.Refresh so that lists (and clients, with list_changed)
// follow.
type ExposeFunc func(serverID, tool string) bool

// Options configures a Gateway. The zero value, or nil, gives the defaults
// each field documents.
type Options struct {
	// Expose selects the servers and tools exposed (see ExposeFunc). Nil
	// exposes everything.
	Expose ExposeFunc

	// Name is the implementation name the gateway gives in its handshake.
	// Empty means "agentmcp <class>/<name>" of the agent.
	Name string

	// SessionTimeout closes a 2025-11-25 session that has seen no request
	// for this long (a client that went away without ending it). Zero means
	// DefaultSessionTimeout; negative means never.
	SessionTimeout time.Duration

	// InputTimeout bounds how long a 2026-07-28 client's call that asked
	// for its input (an input-required result) waits for the client's
	// retry with the answer: past it the upstream call is cancelled, as
	// abandoned, and the agent is free to hibernate. Zero means
	// DefaultInputTimeout.
	InputTimeout time.Duration

	// MaxSessions caps the gateway's 2025-11-25 sessions. A client's new
	// session past the cap ends the session idle the longest (none of its
	// requests in flight; its client gets a 404 on its next request and
	// starts another, as the protocol asks); when every session has a
	// request in flight, the new client's initialize is refused (503).
	// Zero means DefaultMaxSessions; negative means no cap.
	MaxSessions int

	// Sessions, if set, is a cap shared with other Gateways (a program that
	// fronts many agents makes one and gives it to each): the sessions of
	// all of them together are capped likewise, the one idle the longest
	// among them ending first. Nil means no shared cap.
	Sessions *SessionCap

	// Elicitation and Sampling answer the agent's servers' requests for
	// input that no downstream client takes (the request is not within a
	// client's call, or its client does not offer that kind of input).
	// Nil means the handlers in place on the agent when New is called
	// (Agent.ElicitationHandlers, Agent.SamplingHandler). The gateway
	// installs its own on the agent, which pass such requests to these,
	// and Close puts back the handlers that were in place before New.
	Elicitation *input.ElicitationHandlers
	Sampling    input.SamplingHandler

	// AnyHost turns off go-sdk's DNS-rebinding protection, which refuses a
	// request that arrives on a loopback address with a Host header that
	// is not a loopback name (403). Set it when something in front checks
	// the Host instead, or a reverse proxy on the same machine forwards a
	// public name (agentmcp serve does both). False keeps the protection.
	AnyHost bool

	// Logger receives the gateway's logs. Nil discards them.
	Logger *slog.Logger
}

// DefaultSessionTimeout is Options.SessionTimeout's default.
const DefaultSessionTimeout = 10 * time.Minute

// DefaultMaxSessions is Options.MaxSessions's default.
const DefaultMaxSessions = 32

// Gateway is an MCP server (streamable HTTP) that fronts the MCP servers of
// one agent. It is an http.Handler; see the package documentation.
//
// A Gateway is safe for concurrent use.
type Gateway struct {
	a      *agent.Agent
	opts   Options
	logger *slog.Logger
	srv    *mcp.Server
	impl   *mcp.Implementation // srv's

	stateful, stateless *mcp.StreamableHTTPHandler
	// statelessJSON is stateless answering application/json: for a
	// 2026-07-28 request that asks for no progress, which then has nothing
	// to send but its response (see ServeHTTP).
	statelessJSON *mcp.StreamableHTTPHandler

	// fallback are the handlers of server requests used when the request
	// cannot go to a downstream client (Options.Elicitation, Sampling);
	// restore those the agent had before New, which Close puts back.
	fallbackElicit *input.ElicitationHandlers
	fallbackSample input.SamplingHandler
	restoreElicit  *input.ElicitationHandlers
	restoreSample  input.SamplingHandler

	unsubscribe func()
	kick        chan struct{} // capacity 1: the catalogs changed
	quit        chan struct{} // closed by Close
	ctx         context.Context
	cancel      context.CancelFunc // cancels ctx: Close ends the calls the gateway runs itself
	wg          sync.WaitGroup

	// syncMu serialises catalog syncs; it guards cat.
	syncMu sync.Mutex
	cat    catalog

	// seq orders the uses of the sessions (a SessionCap's when shared).
	seq atomic.Int64

	// fastCalls counts the calls answered below go-sdk's server
	// (fastpath.go); noFast turns that path off (the tests compare the
	// two).
	fastCalls atomic.Int64
	noFast    atomic.Bool

	// mu guards the fields below.
	mu       sync.Mutex
	sessions map[string]*liveSession // live 2025-11-25 sessions by id
	pending  map[string]*pendingCall // 2026-07-28 calls waiting for the client's input, by state
	closed   bool
}

// New returns a Gateway for a, which it exposes until Close: it builds the
// MCP server and its handlers and lists a's catalogs, without network I/O.
// It takes over a's elicitation and sampling handlers (Agent.
// ConfigureElicitationHandlers, ConfigureSampling), passing what no
// downstream client takes to Options.Elicitation and Sampling (by
// default, the handlers in place: configure those first); Close puts the
// handlers in place before New back. Close the Gateway before a: a
// program attaches it to a (agent.Agent.Attach), which closes it first.
func New(a *agent.Agent, opts *Options) *Gateway {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Name == "" {
		o.Name = "agentmcp " + a.Namespace()
	}
	if o.SessionTimeout == 0 {
		o.SessionTimeout = DefaultSessionTimeout
	}
	if o.InputTimeout <= 0 {
		o.InputTimeout = DefaultInputTimeout
	}
	if o.MaxSessions == 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	// go-sdk logs session ids (at info); a session id is a credential of
	// sorts (whoever holds it uses the session): the logs get its hash.
	logger = slog.New(hashSessionIDs{logger.Handler()})
	g := &Gateway{
		a:        a,
		opts:     o,
		logger:   logger.With("agent", a.Namespace()),
		kick:     make(chan struct{}, 1),
		quit:     make(chan struct{}),
		sessions: map[string]*liveSession{},
		pending:  map[string]*pendingCall{},
	}
	g.cat.init()
	g.ctx, g.cancel = context.WithCancel(context.Background())
	g.impl = &mcp.Implementation{Name: o.Name, Version: "1.0.0"}
	g.srv = mcp.NewServer(g.impl, &mcp.ServerOptions{
		Instructions: "The MCP servers of agent " + a.Namespace() + ", behind one endpoint. Each tool, prompt and resource names the server it comes from.",
		Capabilities: &mcp.ServerCapabilities{
			Tools:     &mcp.ToolCapabilities{ListChanged: true},
			Prompts:   &mcp.PromptCapabilities{ListChanged: true},
			Resources: &mcp.ResourceCapabilities{ListChanged: true},
		},
		Logger: g.logger,
	})
	g.srv.AddReceivingMiddleware(g.holdSessions, g.freshLists, legacyShapes, g.offerTasks) // offerTasks: tasks.go
	getServer := func(*http.Request) *mcp.Server { return g.srv }
	// The stateful handler speaks the session era (2025-11-25 and
	// before), the stateless one 2026-07-28; ServeHTTP picks by the
	// request's protocol version header. The sessions' idle timeout is
	// the gateway's (liveSession): go-sdk's would not see the calls the
	// gateway answers itself.
	g.stateful = mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
		DisableLocalhostProtection: o.AnyHost,
		Logger:                     g.logger,
	})
	g.stateless = mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
		Stateless:                    true,
		PropagateRequestCancellation: true,
		DisableLocalhostProtection:   o.AnyHost,
		Logger:                       g.logger,
	})
	g.statelessJSON = mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
		Stateless:                    true,
		JSONResponse:                 true,
		PropagateRequestCancellation: true,
		DisableLocalhostProtection:   o.AnyHost,
		Logger:                       g.logger,
	})
	g.installHandlers()
	g.sync()
	g.unsubscribe = a.OnMCPUpdate(func(agent.MCPServersState) { g.changed() })
	g.wg.Go(g.syncer)
	return g
}

// protocolVersionHeader is the header that carries a request's protocol
// version; from 2026-07-28 on, every request has it.
const protocolVersionHeader = "Mcp-Protocol-Version"

// firstStateless is the first protocol version without sessions.
const firstStateless = protocol.Stateless

// ServeHTTP serves MCP over streamable HTTP: requests in 2026-07-28 (or
// later), told by their MCP-Protocol-Version header, statelessly, and the
// others in sessions (2025-11-25 and before).
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	closed := g.closed
	g.mu.Unlock()
	if closed {
		http.Error(w, "the MCP endpoint is closed", http.StatusServiceUnavailable)
		return
	}
	if v := r.Header.Get(protocolVersionHeader); v >= firstStateless {
		g.serveStateless(w, r)
		return
	}
	id := r.Header.Get(sessionIDHeader)
	ls := g.session(id)
	if ls != nil && ls.subject != subjectOf(r.Context()) {
		// Another user's session: as if there were none.
		http.Error(w, "session not found", http.StatusNotFound)
		return
	}
	if id == "" && r.Method == http.MethodPost && !g.admit(r) {
		w.Header().Set("Retry-After", "5")
		http.Error(w, "too many MCP sessions are open, each with a request in flight; retry later", http.StatusServiceUnavailable)
		return
	}
	if ls != nil && r.Method == http.MethodPost {
		ls.startPOST()
		defer ls.endPOST()
		if body := peekBody(r); body != nil && g.serveSessionFast(w, r, ls, body) {
			return
		}
	}
	var released <-chan struct{}
	if r.Method == http.MethodDelete && ls != nil {
		released = ls.released
	}
	g.stateful.ServeHTTP(w, r)
	if released != nil {
		// The client's end of a session is answered once the session no
		// longer holds the agent.
		select {
		case <-released:
		case <-r.Context().Done():
		}
	}
}

// serveStateless serves a 2026-07-28 request. In that era the only
// message a request's response stream carries besides the response is
// progress (elicitation and sampling come back as the result's input
// requests), so a POST whose body names no progress token is answered
// with application/json: go-sdk then skips the event stream (its framing,
// flushes and the stream's bookkeeping). A body with a JSON escape
// (\u…) could spell the key otherwise and keeps the stream.
func (g *Gateway) serveStateless(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.Body == nil {
		g.stateless.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil {
		http.Error(w, "reading the request: "+err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if g.serveStatelessTasks(w, r, body) { // tasks.go
		return
	}
	if g.serveStatelessFast(w, r, body) {
		return
	}
	if bytes.Contains(body, progressTokenKey) || bytes.Contains(body, jsonEscape) {
		g.stateless.ServeHTTP(w, r)
		return
	}
	g.statelessJSON.ServeHTTP(w, r)
}

var (
	progressTokenKey = []byte(`"progressToken"`)
	jsonEscape       = []byte(`\u`)
)

// sessionIDHeader is the header that carries a 2025-11-25 session's id.
const sessionIDHeader = "Mcp-Session-Id"

// Refresh rebuilds the exposed catalogs now, after the rules behind
// Options.Expose changed; clients get list_changed for what changed.
func (g *Gateway) Refresh() { g.sync() }

// Close ends the downstream sessions and stops following the agent; the
// agent's requests for input go to the handlers it had before New from
// then on (Close puts them back). A Gateway closes itself when its agent is closed. Close is
// idempotent and safe to call concurrently; ctx bounds the wait for the
// gateway's goroutines.
func (g *Gateway) Close(ctx context.Context) error {
	g.shutdown()
	done := make(chan struct{})
	go func() { g.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// shutdown is Close without the wait.
func (g *Gateway) shutdown() {
	g.mu.Lock()
	already := g.closed
	g.closed = true
	g.mu.Unlock()
	if already {
		return
	}
	close(g.quit)
	g.cancel()
	g.mu.Lock()
	for state, p := range g.pending {
		p.timer.Stop()
		p.cancel()
		delete(g.pending, state)
	}
	g.mu.Unlock()
	g.unsubscribe()
	for ss := range g.srv.Sessions() {
		ss.Close()
	}
	// The agent's requests for input go to the handlers it had before.
	g.a.ConfigureElicitationHandlers(g.restoreElicit)
	g.a.ConfigureSampling(g.restoreSample)
}

// Done is closed when the gateway is closed: by Close, or because its
// agent was closed.
func (g *Gateway) Done() <-chan struct{} { return g.quit }

// holdSessions follows a 2025-11-25 session from its handshake to its end
// (the client's DELETE, the session timeout, the caps, Close). A session
// does not keep the agent awake: only its requests in flight do (as any
// request to the agent does), so that an idle session leaves its agent to
// hibernate, which ends the session.
func (g *Gateway) holdSessions(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if method == "initialize" && err == nil {
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss.ID() != "" {
				var subject string
				if extra := req.GetExtra(); extra != nil && extra.TokenInfo != nil {
					subject = extra.TokenInfo.UserID
				}
				if ls := g.holdSession(ss, subject); ls != nil {
					// Concurrent handshakes may have passed admit together.
					g.trim(ls)
				}
			}
		}
		return res, err
	}
}

func (g *Gateway) holdSession(ss *mcp.ServerSession, subject string) *liveSession {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil
	}
	if _, ok := g.sessions[ss.ID()]; ok {
		return nil
	}
	ls := &liveSession{ss: ss, subject: subject, released: make(chan struct{}), seq: g.useSeq()}
	ls.lastUse = ls.seq.Add(1)
	ls.ctx, ls.cancel = context.WithCancel(context.Background())
	if t := g.opts.SessionTimeout; t > 0 {
		ls.timeout = t
		ls.timer = time.AfterFunc(t, func() { ss.Close() })
	}
	g.sessions[ss.ID()] = ls
	if c := g.opts.Sessions; c != nil {
		c.add(ls)
	}
	g.logger.Debug("MCP session opened", "session", hashID(ss.ID()))
	g.wg.Go(func() {
		defer func() {
			g.mu.Lock()
			delete(g.sessions, ss.ID())
			g.mu.Unlock()
			if c := g.opts.Sessions; c != nil {
				c.remove(ls)
			}
			ls.end()
			close(ls.released)
		}()
		done := make(chan struct{})
		go func() { ss.Wait(); close(done) }()
		select {
		case <-done:
		case <-g.quit:
			ss.Close()
			<-done
		}
	})
	return ls
}

// session returns the live session of id, or nil.
func (g *Gateway) session(id string) *liveSession {
	if id == "" {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.sessions[id]
}

// liveSession is a 2025-11-25 session from its handshake to its end.
type liveSession struct {
	ss       *mcp.ServerSession
	subject  string             // the user who opened it (auth.TokenInfo's UserID); "" for none
	released chan struct{}      // closed once the session has ended here
	ctx      context.Context    // ends with the session: the calls the gateway answers in it
	cancel   context.CancelFunc // cancels ctx
	timeout  time.Duration      // Options.SessionTimeout; zero for none
	seq      *atomic.Int64      // orders uses: the gateway's, or its SessionCap's

	// mu guards the fields below.
	mu      sync.Mutex
	posts   int                           // POSTs in flight
	lastUse int64                         // seq when a POST last started or ended
	ending  bool                          // closed to make room; no longer counted
	timer   *time.Timer                   // closes the session after timeout without a POST; nil once ended
	calls   map[string]context.CancelFunc // calls the gateway answers itself, by JSON-RPC id (fastpath.go)
}

// startPOST pauses the idle timeout while a POST of the session runs;
// endPOST restarts it after the last (as go-sdk's handler does).
func (ls *liveSession) startPOST() {
	use := ls.seq.Add(1)
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.posts == 0 && ls.timer != nil {
		ls.timer.Stop()
	}
	ls.posts++
	ls.lastUse = use
}

func (ls *liveSession) endPOST() {
	use := ls.seq.Add(1)
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.posts--
	ls.lastUse = use
	if ls.posts == 0 && ls.timer != nil {
		ls.timer.Reset(ls.timeout)
	}
}

// idleSince reports whether the session may be ended to make room (no
// POST in flight, not ending already), and its last use.
func (ls *liveSession) idleSince() (int64, bool) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.lastUse, ls.posts == 0 && !ls.ending
}

// counts reports whether the session counts against the caps.
func (ls *liveSession) counts() bool {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return !ls.ending
}

// evict ends the session to make room for another.
func (ls *liveSession) evict(logger *slog.Logger, why string) {
	ls.mu.Lock()
	ls.ending = true
	ls.mu.Unlock()
	logger.Info("MCP session ended to make room for a new one", "session", hashID(ls.ss.ID()), "cap", why)
	ls.ss.Close()
}

// end stops the timeout and the session's calls.
func (ls *liveSession) end() {
	ls.mu.Lock()
	if ls.timer != nil {
		ls.timer.Stop()
		ls.timer = nil
	}
	ls.mu.Unlock()
	ls.cancel()
}

// changed notes that the agent's state changed; the syncer follows.
func (g *Gateway) changed() {
	select {
	case g.kick <- struct{}{}:
	default:
	}
}

// syncer rebuilds the catalogs after every change, until Close or the
// agent's end (which closes the gateway).
func (g *Gateway) syncer() {
	for {
		select {
		case <-g.kick:
			g.sync()
		case <-g.a.Done():
			g.shutdown()
			return
		case <-g.quit:
			return
		}
	}
}

// freshLists makes a list request see the agent as it is: a wake's
// servers restored, and every change made (the syncer may not have heard
// of the latest yet). Clients list rarely (on connecting, after
// list_changed), and a sync of an unchanged catalog changes nothing.
func (g *Gateway) freshLists(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "tools/list", "prompts/list", "resources/list", "resources/templates/list":
			g.a.WaitCatalogs(ctx) // stored catalogs are listed at once
			g.sync()
		case "tools/call":
			// A client may call a tool it listed before the agent
			// hibernated, right after the wake.
			if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && !g.listed(p.Name) {
				g.a.WaitCatalogs(ctx)
				g.sync()
			}
		}
		return next(ctx, method, req)
	}
}

// legacyShapes gives a 2025-11-25 session's lists and resource reads the
// shape of its era: go-sdk's server adds the cache hints of 2026-07-28
// (ttlMs, cacheScope) to them in every era.
func legacyShapes(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || res == nil {
			return res, err
		}
		if _, ok := res.(mcp.CacheableResult); !ok {
			return res, nil
		}
		if ss, ok := req.GetSession().(*mcp.ServerSession); !ok || stateless(ss) {
			return res, nil
		}
		return legacyResult{res}, nil
	}
}

// legacyResult is a result whose JSON lacks the cache hints of 2026-07-28.
type legacyResult struct{ mcp.Result }

func (r legacyResult) MarshalJSON() ([]byte, error) {
	data, err := json.Marshal(r.Result)
	if err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, err
	}
	delete(fields, "ttlMs")
	delete(fields, "cacheScope")
	return json.Marshal(fields)
}

// listed reports whether a tool is in the catalog.
func (g *Gateway) listed(key string) bool {
	g.syncMu.Lock()
	defer g.syncMu.Unlock()
	_, ok := g.cat.tools[key]
	return ok
}
