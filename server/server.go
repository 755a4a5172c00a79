package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/cluster"
	"github.com/agentmcp/agentmcp/gateway"
	"github.com/agentmcp/agentmcp/server/internal/forward"
	"github.com/agentmcp/agentmcp/server/internal/guard"
	"github.com/agentmcp/agentmcp/server/internal/pages"
	"github.com/agentmcp/agentmcp/server/internal/ready"
	"github.com/agentmcp/agentmcp/store"
)

// Options configures a Server. The zero value, or nil, gives the defaults
// each field documents.
type Options struct {
	// Agent configures every agent the server opens (Manager options, SSRF
	// guard, callback host). Nil means agent's defaults. Its Logger, when
	// nil, is Logger.
	Agent *agent.Options

	// BlockedURLHint is appended to the message of a blocked_url error:
	// how the operator of this server lets its agents reach such a
	// destination (agentmcp serve names its --allow-private and
	// --allow-net). Empty adds nothing.
	BlockedURLHint string

	// Token, if set, is required on every API, WebSocket and server-sent
	// events request, as "Authorization: Bearer TOKEN" or as the cookie
	// that opening the dashboard at /?token=TOKEN sets. Empty means no
	// token: then only requests whose Host is a loopback name or address
	// (or one of AllowedHosts) are served, so that a web page cannot reach
	// the server through DNS rebinding.
	Token string

	// AllowedHosts are host names (without port) served in addition to
	// loopback ones when Token is empty. Nil means none.
	AllowedHosts []string

	// TrustedOrigins are the origins ("http://localhost:5173") of web apps
	// allowed to use the API and the streams from a browser, with the
	// user's cookie (CORS, WebSocket origin and CSRF checks). Nil means
	// only the server's own pages. Open refuses an entry that is not an
	// origin (a path, even "/", or no scheme).
	TrustedOrigins []string

	// AllowStdioServers lets API clients add stdio servers: commands the
	// server runs on this machine, as the user it runs as. That is remote
	// code execution for whoever holds the token, so it is off by default;
	// even when on, such adds need the token and are refused from browser
	// pages of other sites or origins (trusted ones included). Stdio
	// servers added otherwise (agentmcp add --db, import, the library) are
	// run either way. With it (and Token), the dashboard's add form offers
	// commands too.
	AllowStdioServers bool

	// Classes restricts the agent classes served. Nil means any class that
	// is kebab-case (see ValidClass).
	Classes []string

	// DefaultAgent is the agent the dashboard at / shows, "class/name".
	// Empty means DefaultAgent ("agentmcp/default").
	DefaultAgent string

	// AgentIdleTimeout is how long an agent stays awake after its last
	// request when nothing keeps it awake (a stream, a call, a pending
	// elicitation, an OAuth flow): then it is hibernated, its sessions
	// kept for the next request, which wakes it. Zero means
	// agent.DefaultIdleTimeout (5 minutes); negative means never.
	AgentIdleTimeout time.Duration

	// MaxAwake caps the agents awake at once: waking one more hibernates
	// the least recently used idle one (see agent.HostOptions.MaxAwake).
	// Zero means agent.DefaultMaxAwake; negative means no cap.
	MaxAwake int

	// KeepAwake names agents ("class/name") woken when the server opens
	// and never hibernated, in addition to those with a keep-awake server.
	KeepAwake []string

	// Cluster, if set, makes the server one replica of several on one
	// Postgres store (see ClusterOptions). Nil means one process.
	Cluster *ClusterOptions

	// ShouldSendProtocolMessages decides, per WebSocket or SSE connection,
	// whether it gets cf_agent_mcp_servers frames (the seed's
	// shouldSendProtocolMessages). Nil means every connection does. It is
	// called once, when the connection opens.
	ShouldSendProtocolMessages func(r *http.Request) bool

	// StreamBuffer is how many frames a stream client may have waiting
	// before it is dropped as too slow. Zero means 16.
	StreamBuffer int

	// KeepAlive is the interval of WebSocket pings and SSE comments on
	// idle streams. Zero means 30 seconds; negative means none.
	KeepAlive time.Duration

	// ElicitationTimeout bounds how long a server's request for the user's
	// input (an elicitation) waits for an answer through the API or the
	// dashboard before it is cancelled. Zero means 10 minutes. Negative
	// means agents get no elicitation handlers: servers are not offered
	// elicitation. How many may wait, and how large they may be, is
	// Agent.Manager.ServerRequests (by default 4 per server and 16 per
	// agent, of at most 64 KiB each); the rest are refused.
	ElicitationTimeout time.Duration

	// CallTimeout bounds a tool call, resource read or prompt get made
	// through the API when the request names no timeoutMs. Zero means
	// DefaultCallTimeout; negative means no bound of the server's own (a
	// call then lasts as long as its HTTP request). A call that passes its
	// bound, or whose HTTP client goes away, is cancelled on the MCP
	// server (notifications/cancelled).
	CallTimeout time.Duration

	// HeaderTimeout bounds how long a client may take to send a request's
	// headers, and IdleTimeout how long a keep-alive connection may wait
	// for its next request before it is closed: the connection limits of
	// HTTPServer. Zero means 10 seconds and 60 seconds; negative means
	// none.
	HeaderTimeout, IdleTimeout time.Duration

	// BodyTimeout bounds how long a client may take to send a request's
	// body once its headers are in; a slower one gets 408 request_timeout
	// and its connection is closed. Bodies are read before the handler
	// runs, only from clients that passed the token check, and only on the
	// routes that take one (the API's POST routes and PUT .../exposure, at most 1 MiB; anywhere
	// else a body is not read and the connection is closed after the
	// answer). Zero means 30 seconds; negative means none.
	BodyTimeout time.Duration

	// WriteTimeout bounds how long a response may take to be written once
	// it starts (not the work before it: a tool call may run longer), so
	// that a client that does not read its answer does not hold the
	// request forever. The WebSocket and SSE streams are bounded by their
	// own write timeout and pings instead (KeepAlive). Zero means 60
	// seconds; negative means none.
	WriteTimeout time.Duration

	// OAuthCallback configures how agents answer OAuth callbacks. Nil means
	// a page for the dashboard's Authorize popup, which closes itself after
	// a success and shows the error after a failure.
	OAuthCallback *agent.OAuthCallbackConfig

	// Metrics, if set, answers GET /metrics (a Prometheus exporter's
	// handler, say), behind the token like the API. Nil means no /metrics.
	Metrics http.Handler

	// Gateway, if set, gives the options of an agent's MCP endpoint
	// (/agents/{class}/{name}/mcp, package gateway), called when the
	// endpoint of an awake agent is first used. Nil, or a nil result,
	// means gateway's defaults, but for Expose, which is then the agent's
	// exposure rules (agent.Agent.Exposes; PUT .../exposure sets them).
	Gateway func(a *agent.Agent) *gateway.Options

	// MCPSessions caps the MCP sessions (2025-11-25) of all the agents'
	// endpoints together, past each endpoint's own cap
	// (gateway.Options.MaxSessions): a new session past it ends the one
	// idle the longest. Zero means DefaultMCPSessions; negative means no
	// cap.
	MCPSessions int

	// OAuth, if set, also lets the agents' MCP endpoints be used with an
	// external authorization server's access tokens (see OAuthOptions):
	// they then always need a token, this one (Token) or the
	// authorization server's, and a request without one gets 401 with the
	// protected resource metadata's URL, served without a token at
	// /.well-known/oauth-protected-resource/agents/{class}/{name}/mcp. Nil
	// means the endpoints take Token like the API.
	OAuth *OAuthOptions

	// Logger receives the server's logs. Nil discards them.
	Logger *slog.Logger
}

// DefaultAgent is the agent the dashboard shows and the terminal commands
// use when none is named.
const DefaultAgent = "agentmcp/default"

// DefaultCallTimeout is the bound of an API call on an MCP server when
// neither the request (timeoutMs) nor Options.CallTimeout sets one.
const DefaultCallTimeout = 2 * time.Minute

// Server hosts named agents over HTTP: a JSON API, WebSocket and SSE
// streams of their MCP state, and the dashboard. Agents are kept in the
// store and woken on demand by an agent.Host: a request to a sleeping agent
// opens it, and an idle one is hibernated (Options.AgentIdleTimeout,
// Options.MaxAwake). An agent exists when it has servers in the store,
// while it is awake (created by adding a server to it, or by PUT
// /agents/{class}/{name}), and for the default agents (DefaultAgent and
// Options.DefaultAgent), which always exist; reading any other agent is
// unknown_agent. It is an http.Handler.
//
// A Server is safe for concurrent use.
type Server struct {
	st      store.Store
	opts    Options
	agentO  agent.Options
	host    *agent.Host
	logger  *slog.Logger
	sec     *guard.Guard // the security layer
	handler http.Handler // the routes behind sec's checks
	pages   *pages.Pages // the dashboard

	ctx    context.Context // ends when the streams must end
	cancel context.CancelFunc

	hooks atomic.Pointer[testHooks] // nil but in tests

	// mcpSessions caps the MCP sessions of all the agents' gateways
	// (Options.MCPSessions); nil for no cap.
	mcpSessions *gateway.SessionCap

	mux   *http.ServeMux     // the routes, without sec's checks
	fwd   *forward.Forwarder // requests to other replicas; nil without Options.Cluster
	probe *store.Probe       // the store's answer for /readyz
	ready *ready.Checker     // /healthz, /readyz, and 503 while not ready

	// mu guards the fields below.
	mu       sync.Mutex
	closed   bool
	draining bool
	streams  bool // false once CloseStreams was called
}

// testHooks let tests see inside: onWatch sees every stream's watch as it
// starts, beforeWrite runs before a WebSocket writes an update.
type testHooks struct {
	onWatch     func(*agent.Watcher)
	beforeWrite func()
}

// NamespaceLister is agent.NamespaceLister: stores that list the agents
// that have servers (store/sqlite and store/postgres do). GET /agents uses
// it to list the sleeping agents; with a store that lacks it, only the
// awake ones are listed.
type NamespaceLister = agent.NamespaceLister

// Open returns a Server for the agents kept in st. It wakes only the
// agents that must stay awake (Options.KeepAwake, and those with a
// keep-awake server), restoring their connections in the background; the
// others wake on their first request. The Server does not close st.
func Open(ctx context.Context, st store.Store, opts *Options) (*Server, error) {
	if opts != nil {
		if err := guard.CheckOrigins(opts.TrustedOrigins); err != nil {
			return nil, fmt.Errorf("server: TrustedOrigins: %w", err)
		}
		for _, key := range opts.KeepAwake {
			class, name, _ := strings.Cut(key, "/")
			if ValidClass(class) && ValidName(name) {
				continue
			}
			return nil, fmt.Errorf("server: KeepAwake: %q is not an agent this server hosts (class/name, the class in kebab-case)", key)
		}
	}
	if opts != nil && opts.OAuth != nil {
		if u, err := url.Parse(opts.OAuth.Issuer); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return nil, fmt.Errorf("server: OAuth.Issuer %q: want the authorization server's issuer URL (https://...)", opts.OAuth.Issuer)
		}
	}
	s := newServer(st, opts)
	if err := s.host.Start(ctx); err != nil {
		s.Close(ctx)
		return nil, fmt.Errorf("server: %w", err)
	}
	if c := s.opts.Cluster; c != nil {
		go c.Replica.Rehome(s.ctx, cluster.RehomeInterval, s.isDraining, s.wake)
	}
	return s, nil
}

func newServer(st store.Store, opts *Options) *Server {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.StreamBuffer <= 0 {
		o.StreamBuffer = 16
	}
	if o.KeepAlive == 0 {
		o.KeepAlive = 30 * time.Second
	}
	if o.ElicitationTimeout == 0 {
		o.ElicitationTimeout = 10 * time.Minute
	}
	if o.DefaultAgent == "" {
		o.DefaultAgent = DefaultAgent
	}
	if o.CallTimeout == 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	o.HeaderTimeout = orDefault(o.HeaderTimeout, defaultHeaderTimeout)
	o.IdleTimeout = orDefault(o.IdleTimeout, defaultIdleTimeout)
	o.BodyTimeout = orDefault(o.BodyTimeout, defaultBodyTimeout)
	o.WriteTimeout = orDefault(o.WriteTimeout, defaultWriteTimeout)
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	var ao agent.Options
	if o.Agent != nil {
		ao = *o.Agent
	}
	if ao.Logger == nil {
		ao.Logger = logger
	}
	ao.Manager = hostApps(ao.Manager) // apps.go: the dashboard renders views
	if o.ElicitationTimeout > 0 {
		ao.ElicitationTimeout = o.ElicitationTimeout
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		st:      st,
		opts:    o,
		agentO:  ao,
		logger:  logger,
		ctx:     ctx,
		cancel:  cancel,
		streams: true,
	}
	var dir agent.Directory
	if c := o.Cluster; c != nil {
		dir = c.Replica
		if c.WaitForOwner == 0 {
			c.WaitForOwner = 15 * time.Second
		}
		s.fwd = forward.New(&forward.Options{Replica: c.Replica, Key: c.Key, WaitForOwner: c.WaitForOwner, Streams: ctx, Logger: logger})
	}
	s.host = agent.NewHost(st, &agent.HostOptions{
		Directory:   dir,
		Agent:       &s.agentO,
		IdleTimeout: o.AgentIdleTimeout,
		MaxAwake:    o.MaxAwake,
		KeepAwake:   o.KeepAwake,
		Defaults:    []string{o.DefaultAgent, DefaultAgent},
		OnOpen:      s.configure,
		Logger:      logger,
	})
	if o.MCPSessions >= 0 {
		s.mcpSessions = gateway.NewSessionCap(cmp.Or(o.MCPSessions, DefaultMCPSessions))
	}
	var gate func() error
	if c := o.Cluster; c != nil {
		gate = c.Replica.Gate
	}
	s.probe = store.NewProbe(st, &store.ProbeOptions{Logger: logger})
	s.ready = ready.New(s.notReady, gate, func(ctx context.Context) error { return s.probe.Check(ctx) })
	s.pages = pages.New()
	s.sec = newGuard(&o)
	s.mux = s.routes()
	s.handler = s.sec.Wrap(s.mux, route)
	return s
}

// newGuard is the security layer of o (package guard).
func newGuard(o *Options) *guard.Guard {
	g := &guard.Options{Token: o.Token, AllowedHosts: o.AllowedHosts, TrustedOrigins: o.TrustedOrigins,
		BodyTimeout: o.BodyTimeout, WriteTimeout: o.WriteTimeout}
	if o.OAuth != nil {
		var public string
		if o.Agent != nil {
			public = o.Agent.CallbackHost
		}
		g.Resource = resourceOptions(o.OAuth, public)
	}
	return guard.New(g)
}

// configure sets up an agent the host opened.
func (s *Server) configure(a *agent.Agent) {
	a.ConfigureOAuthCallback(s.callbackConfig())
}

// callbackConfig is how the agents answer OAuth callbacks.
func (s *Server) callbackConfig() agent.OAuthCallbackConfig {
	if s.opts.OAuthCallback != nil {
		return *s.opts.OAuthCallback
	}
	return agent.OAuthCallbackConfig{CustomHandler: s.pages.OAuthDone}
}

// orDefault is d for zero, and zero (none) for a negative duration.
func orDefault(v, d time.Duration) time.Duration {
	switch {
	case v == 0:
		return d
	case v < 0:
		return 0
	}
	return v
}

var (
	classRE = regexp.MustCompile(`^[a-z][a-z0-9-]{0,62}$`)
	nameRE  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._~-]{0,127}$`)
)

// ValidClass reports whether class is a class name a Server serves:
// kebab-case, ^[a-z][a-z0-9-]{0,62}$. Agent classes are kebab-case in URLs
// so that the default OAuth callback URL (/agents/{class}/{name}/callback,
// with the class in kebab-case) routes back to the same agent.
func ValidClass(class string) bool { return classRE.MatchString(class) }

// ValidName reports whether name is an agent instance name a Server
// serves: ^[A-Za-z0-9][A-Za-z0-9._~-]{0,127}$, which needs no escaping in a
// URL path.
func ValidName(name string) bool { return nameRE.MatchString(name) }

// checkAgent refuses agents the server does not host.
func (s *Server) checkAgent(class, name string) *api.APIError {
	switch {
	case !ValidClass(class):
		return apiErrorf(http.StatusNotFound, api.CodeUnknownAgent, "no agent class %q: classes are kebab-case (lower-case letters, digits and '-', starting with a letter)", class)
	case s.opts.Classes != nil && !slices.Contains(s.opts.Classes, class):
		return apiErrorf(http.StatusNotFound, api.CodeUnknownAgent, "no agent class %q on this server", class)
	case !ValidName(name):
		return apiErrorf(http.StatusNotFound, api.CodeUnknownAgent, "invalid agent name %q: letters, digits, '.', '_', '~' and '-', at most 128, starting with a letter or digit", name)
	}
	return nil
}

// errClosed is returned by Use after Close.
var errClosed = errors.New("server: closed")

// Host returns the host of the server's agents.
func (s *Server) Host() *agent.Host { return s.host }

// Use returns the agent class/name, awake, creating it when it does not
// exist (see agent.Host.Use), and holds it awake until release is called.
func (s *Server) Use(ctx context.Context, class, name string) (a *agent.Agent, release func(), err error) {
	if aerr := s.checkAgent(class, name); aerr != nil {
		return nil, nil, aerr
	}
	a, release, err = s.host.Use(ctx, class, name)
	if errors.Is(err, agent.ErrHostClosed) {
		err = errClosed
	}
	return a, release, err
}

// useKnown is Use for requests that read or use an agent: it never
// creates one. It wakes the agent when it is awake already, has servers in
// the store, or, but for the OAuth callback, is a default agent. Any other
// agent is unknown_agent, and nothing is opened, so that such requests
// cannot fill the host: with the list of the agents that exist, or for
// the callback (which carries no access token, and completes only an
// authorization a stored server started) saying there is no authorization
// to complete.
func (s *Server) useKnown(ctx context.Context, class, name string, callback bool) (*agent.Agent, func(), error) {
	if aerr := s.checkAgent(class, name); aerr != nil {
		return nil, nil, aerr
	}
	key := class + "/" + name
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, nil, errClosed
	}
	if !s.host.IsAwake(class, name) && (callback || !s.host.IsDefault(key)) {
		rows, err := s.st.ListServers(ctx, key)
		if err != nil {
			return nil, nil, fmt.Errorf("reading the servers of agent %s: %w", key, err)
		}
		if len(rows) == 0 && callback {
			return nil, nil, apiErrorf(http.StatusNotFound, api.CodeUnknownAgent, "agent %s has no MCP servers: there is no authorization to complete", key)
		}
		if len(rows) == 0 {
			return nil, nil, s.unknownAgent(ctx, key)
		}
	}
	return s.Use(ctx, class, name)
}

// unknownAgent is the error for a request to an agent that does not exist.
func (s *Server) unknownAgent(ctx context.Context, key string) *api.APIError {
	var known []string
	agents, _, _ := s.knownAgents(ctx, maxAgentsShown)
	for _, a := range agents {
		known = append(known, a.Class+"/"+a.Name)
	}
	err := apiErrorf(http.StatusNotFound, api.CodeUnknownAgent,
		"there is no agent %s (agents: %s); adding a server to it creates it", key, strings.Join(known, ", "))
	err.Agents = known
	return err
}

// maxAgentsShown bounds the agents an unknown_agent error lists.
const maxAgentsShown = 20

// knownAgents returns up to limit agents that exist, of those this server
// hosts (agent.Host.Known).
func (s *Server) knownAgents(ctx context.Context, limit int) (out []api.AgentInfo, more bool, err error) {
	keys, more, err := s.host.Known(ctx, limit, func(class, name string) bool { return s.checkAgent(class, name) == nil })
	for _, key := range keys {
		class, name, _ := strings.Cut(key, "/")
		out = append(out, api.AgentInfo{Class: class, Name: name})
	}
	return out, more, err
}

// Agents returns the agents awake now, sorted by class/name.
func (s *Server) Agents() []api.AgentInfo {
	out := []api.AgentInfo{}
	for _, key := range s.host.Awake() {
		class, name, _ := strings.Cut(key, "/")
		out = append(out, api.AgentInfo{Class: class, Name: name})
	}
	return out
}

// WaitForConnections waits until the connections of every awake agent
// have settled (see agent.Agent.WaitForConnections), or ctx is done.
func (s *Server) WaitForConnections(ctx context.Context) { s.host.WaitForConnections(ctx) }

// CloseStreams ends every WebSocket and SSE stream (WebSocket clients get
// close status 1001, going away) and refuses new ones with shutting_down.
// A program shutting down calls it first, so that http.Server.Shutdown is
// not kept waiting by streams (http.Server.RegisterOnShutdown). It is
// idempotent.
func (s *Server) CloseStreams() {
	s.mu.Lock()
	s.streams = false
	s.mu.Unlock()
	s.cancel()
}

// Close ends the streams and closes every awake agent with
// agent.Agent.Close, which keeps their MCP sessions resumable by the next
// Open. It does not close the store. ctx bounds the wait for connections
// to close. Close is idempotent; later calls return nil.
func (s *Server) Close(ctx context.Context) error {
	s.CloseStreams()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	err := s.host.Close(ctx) // each agent closes its gateway first
	if s.fwd != nil {
		s.fwd.CloseIdleConnections()
	}
	return err
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.ready.Serve(w, r) {
		return
	}
	s.handler.ServeHTTP(w, r)
}
