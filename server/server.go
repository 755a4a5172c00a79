package server

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/store"
)

// Options configures a Server. The zero value, or nil, gives the defaults
// each field documents.
type Options struct {
	// Agent configures every agent the server opens (Manager options, SSRF
	// guard, callback host). Nil means agent's defaults. Its Logger, when
	// nil, is Logger.
	Agent *agent.Options

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

	// Classes restricts the agent classes served. Nil means any class that
	// is kebab-case (see ValidClass).
	Classes []string

	// DefaultAgent is the agent the dashboard at / shows, "class/name".
	// Empty means DefaultAgent ("agentmcp/default").
	DefaultAgent string

	// MaxAgents caps the agents open at once; more are refused with
	// too_many_agents. Zero means 100.
	MaxAgents int

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
	// routes that take one (the API's POST routes, at most 1 MiB; anywhere
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

	// Logger receives the server's logs. Nil discards them.
	Logger *slog.Logger
}

// DefaultAgent is the agent the dashboard shows and the terminal commands
// use when none is named.
const DefaultAgent = "agentmcp/default"

// DefaultCallTimeout is the bound of an API call on an MCP server when
// neither the request (timeoutMs) nor Options.CallTimeout sets one.
const DefaultCallTimeout = 2 * time.Minute

// MaxCallTimeout is the largest timeoutMs a request may ask for.
const MaxCallTimeout = time.Hour

// Server hosts named agents over HTTP: a JSON API, WebSocket and SSE
// streams of their MCP state, and the dashboard. An agent exists when it
// has servers in the store (Open opens those), when it was created (by
// adding a server to it, PUT /agents/{class}/{name}, or Agent), and for
// the default agents (DefaultAgent and Options.DefaultAgent), which always
// exist; reading any other agent is unknown_agent. It is an http.Handler.
//
// A Server is safe for concurrent use.
type Server struct {
	st      store.Store
	opts    Options
	agentO  agent.Options
	logger  *slog.Logger
	sec     *security
	handler http.Handler       // the routes behind sec's checks
	pages   *template.Template // index.html and callback.html

	ctx    context.Context // ends when the streams must end
	cancel context.CancelFunc

	// mu guards the fields below.
	mu      sync.Mutex
	agents  map[string]*entry // by "class/name"
	order   []string
	closed  bool
	streams bool // false once CloseStreams was called
}

// entry is an agent being opened or open, with its stream hub.
type entry struct {
	class, name string
	ready       chan struct{} // closed when a and err are set
	a           *agent.Agent
	hub         *hub
	elicit      *elicitations
	err         error
}

// NamespaceLister is implemented by stores that can list the agents that
// have servers (store/sqlite and store/postgres do). Open uses it to
// restore every agent; with a store that lacks it, agents are restored on
// first use.
type NamespaceLister interface {
	ListNamespaces(ctx context.Context) ([]string, error)
}

// Open returns a Server for the agents kept in st, and opens every agent
// that has servers in st (their connections are restored in the
// background; WaitForConnections waits for them). Stored agents whose
// class or name the server would not serve are skipped, with a warning.
// The Server does not close st.
func Open(ctx context.Context, st store.Store, opts *Options) (*Server, error) {
	if opts != nil {
		for _, origin := range opts.TrustedOrigins {
			if err := http.NewCrossOriginProtection().AddTrustedOrigin(origin); err != nil {
				return nil, fmt.Errorf("server: TrustedOrigins: %q is not an origin (scheme://host[:port], no path)", origin)
			}
		}
	}
	s := newServer(st, opts)
	lister, ok := st.(NamespaceLister)
	if !ok {
		return s, nil
	}
	namespaces, err := lister.ListNamespaces(ctx)
	if err != nil {
		s.Close(ctx)
		return nil, fmt.Errorf("server: restoring agents: %w", err)
	}
	for _, ns := range namespaces {
		class, name, _ := strings.Cut(ns, "/")
		if err := s.checkAgent(class, name); err != nil {
			s.logger.Warn("not restoring a stored agent", "agent", ns, "reason", err.Message)
			continue
		}
		if _, err := s.Agent(ctx, class, name); err != nil {
			s.Close(ctx)
			return nil, fmt.Errorf("server: restoring agent %s: %w", ns, err)
		}
	}
	return s, nil
}

func newServer(st store.Store, opts *Options) *Server {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.MaxAgents <= 0 {
		o.MaxAgents = 100
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
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		st:      st,
		opts:    o,
		agentO:  ao,
		logger:  logger,
		agents:  map[string]*entry{},
		ctx:     ctx,
		cancel:  cancel,
		streams: true,
	}
	s.pages = parsePages()
	s.sec = newSecurity(&o)
	s.handler = s.sec.wrap(s.routes())
	return s
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
func (s *Server) checkAgent(class, name string) *APIError {
	switch {
	case !ValidClass(class):
		return apiErrorf(http.StatusNotFound, CodeUnknownAgent, "no agent class %q: classes are kebab-case (lower-case letters, digits and '-', starting with a letter)", class)
	case s.opts.Classes != nil && !slices.Contains(s.opts.Classes, class):
		return apiErrorf(http.StatusNotFound, CodeUnknownAgent, "no agent class %q on this server", class)
	case !ValidName(name):
		return apiErrorf(http.StatusNotFound, CodeUnknownAgent, "invalid agent name %q: letters, digits, '.', '_', '~' and '-', at most 128, starting with a letter or digit", name)
	}
	return nil
}

// errClosed is returned by Agent after Close.
var errClosed = errors.New("server: closed")

// Agent returns the agent class/name, creating it when it does not exist
// (opening it, and restoring its stored servers, on first use). Concurrent
// calls for one agent open it once.
func (s *Server) Agent(ctx context.Context, class, name string) (*agent.Agent, error) {
	e, err := s.agentEntry(ctx, class, name)
	if err != nil {
		return nil, err
	}
	return e.a, nil
}

func (s *Server) agentEntry(ctx context.Context, class, name string) (*entry, error) {
	if aerr := s.checkAgent(class, name); aerr != nil {
		return nil, aerr
	}
	key := class + "/" + name
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, errClosed
	}
	e, ok := s.agents[key]
	if !ok {
		if len(s.agents) >= s.opts.MaxAgents {
			s.mu.Unlock()
			return nil, apiErrorf(http.StatusServiceUnavailable, CodeTooManyAgents, "this server already hosts %d agents", s.opts.MaxAgents)
		}
		e = &entry{class: class, name: name, ready: make(chan struct{})}
		s.agents[key] = e
		s.order = append(s.order, key)
	}
	s.mu.Unlock()
	if !ok {
		s.open(ctx, key, e)
	}
	select {
	case <-e.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if e.err != nil {
		return nil, e.err
	}
	return e, nil
}

// knownEntry is agentEntry for requests that read or use an agent: it
// never creates one. It returns the agent when it is open (or being
// opened), or opens it when it has servers in the store, as a restart
// would, or, but for the OAuth callback, when it is a default agent. Any
// other agent is unknown_agent, and nothing is opened, so that such
// requests cannot use up Options.MaxAgents: with the list of the agents
// that exist, or for the callback (which carries no access token, and
// completes only an authorization a stored server started) saying there
// is no authorization to complete.
func (s *Server) knownEntry(ctx context.Context, class, name string, callback bool) (*entry, error) {
	if aerr := s.checkAgent(class, name); aerr != nil {
		return nil, aerr
	}
	key := class + "/" + name
	s.mu.Lock()
	closed := s.closed
	_, open := s.agents[key]
	s.mu.Unlock()
	if closed {
		return nil, errClosed
	}
	if !open && (callback || !s.isDefault(key)) {
		rows, err := s.st.ListServers(ctx, key)
		if err != nil {
			return nil, fmt.Errorf("reading the servers of agent %s: %w", key, err)
		}
		if len(rows) == 0 && callback {
			return nil, apiErrorf(http.StatusNotFound, CodeUnknownAgent, "agent %s has no MCP servers: there is no authorization to complete", key)
		}
		if len(rows) == 0 {
			return nil, s.unknownAgent(key)
		}
	}
	return s.agentEntry(ctx, class, name)
}

// unknownAgent is the error for a request to an agent that does not exist.
func (s *Server) unknownAgent(key string) *APIError {
	var known []string
	for _, a := range s.knownAgents() {
		known = append(known, a.Class+"/"+a.Name)
	}
	err := apiErrorf(http.StatusNotFound, CodeUnknownAgent,
		"there is no agent %s (agents: %s); adding a server to it creates it", key, strings.Join(known, ", "))
	err.Agents = known
	return err
}

// isDefault reports whether key ("class/name") is a default agent, which
// always exists.
func (s *Server) isDefault(key string) bool {
	return key == s.opts.DefaultAgent || key == DefaultAgent
}

// defaults returns the default agents this server hosts.
func (s *Server) defaults() []AgentInfo {
	var out []AgentInfo
	for _, key := range []string{s.opts.DefaultAgent, DefaultAgent} {
		class, name, _ := strings.Cut(key, "/")
		if s.checkAgent(class, name) != nil || slices.Contains(out, AgentInfo{class, name}) {
			continue
		}
		out = append(out, AgentInfo{Class: class, Name: name})
	}
	return out
}

// knownAgents returns the agents that exist: the default agents first,
// then the open ones in the order they were opened.
func (s *Server) knownAgents() []AgentInfo {
	out := s.defaults()
	for _, a := range s.Agents() {
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// open opens the agent of e, outside s.mu. The caller's ctx bounds only
// the storage reads: the agent outlives the request that opened it.
func (s *Server) open(ctx context.Context, key string, e *entry) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	a, err := agent.Open(ctx, s.st, e.class, e.name, &s.agentO)
	if err == nil {
		cb := agent.OAuthCallbackConfig{CustomHandler: s.oauthDone}
		if s.opts.OAuthCallback != nil {
			cb = *s.opts.OAuthCallback
		}
		a.ConfigureOAuthCallback(cb)
		var h *hub
		el := newElicitations(s.opts.ElicitationTimeout, s.ctx.Done(), func() { h.elicitationsChanged() })
		h = newHub(s, a, el)
		if s.opts.ElicitationTimeout > 0 {
			a.Manager().ConfigureElicitationHandlers(el.handler())
		}
		s.mu.Lock()
		closed := s.closed
		if !closed {
			e.a, e.hub, e.elicit = a, h, el
		}
		s.mu.Unlock()
		if closed {
			h.stop()
		}
		if closed {
			a.Close(ctx)
			err = errClosed
		}
	}
	if err != nil {
		s.logger.Warn("cannot open agent", "agent", key, "error", err)
		e.err = fmt.Errorf("opening agent %s: %w", key, err)
		s.mu.Lock()
		if s.agents[key] == e {
			delete(s.agents, key)
			s.order = slices.DeleteFunc(s.order, func(k string) bool { return k == key })
		}
		s.mu.Unlock()
	}
	close(e.ready)
}

// AgentInfo names one open agent.
type AgentInfo struct {
	Class string `json:"class"`
	Name  string `json:"name"`
}

// Agents returns the agents open now, in the order they were opened.
func (s *Server) Agents() []AgentInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []AgentInfo{}
	for _, key := range s.order {
		e := s.agents[key]
		select {
		case <-e.ready:
			if e.err == nil {
				out = append(out, AgentInfo{Class: e.class, Name: e.name})
			}
		default:
		}
	}
	return out
}

// WaitForConnections waits until the connections of every open agent have
// settled (see agent.Agent.WaitForConnections), or ctx is done.
func (s *Server) WaitForConnections(ctx context.Context) {
	for _, e := range s.entries() {
		e.a.WaitForConnections(ctx)
	}
}

// entries returns the agents open now.
func (s *Server) entries() []*entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*entry
	for _, key := range s.order {
		e := s.agents[key]
		select {
		case <-e.ready:
			if e.err == nil {
				out = append(out, e)
			}
		default:
		}
	}
	return out
}

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

// Close ends the streams and closes every agent with agent.Agent.Close,
// which keeps their MCP sessions resumable by the next Open. It does not
// close the store. ctx bounds the wait for connections to close. Close is
// idempotent; later calls return nil.
func (s *Server) Close(ctx context.Context) error {
	s.CloseStreams()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	entries := make([]*entry, 0, len(s.order))
	for _, key := range s.order {
		entries = append(entries, s.agents[key])
	}
	s.mu.Unlock()

	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, e := range entries {
		wg.Go(func() {
			<-e.ready // open bounds itself
			if e.err != nil {
				return
			}
			e.hub.stop()
			if err := e.a.Close(ctx); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("closing agent %s/%s: %w", e.class, e.name, err))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.handler.ServeHTTP(w, r)
}
