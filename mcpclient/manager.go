package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentmcp/agentmcp/mcpclient/internal/eventq"
	"github.com/agentmcp/agentmcp/mcpclient/internal/gate"
	"github.com/agentmcp/agentmcp/mcpclient/internal/telemetry"
	"github.com/agentmcp/agentmcp/mcpclient/stdio"
	"github.com/agentmcp/agentmcp/mcpclient/transport"
	"github.com/agentmcp/agentmcp/netguard"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A Manager keeps connections to many MCP servers: it connects them over
// any transport and protocol era, discovers their catalogs, keeps those
// catalogs current, reconnects when a connection drops, and routes calls.
//
// It is the Go counterpart of the seed's MCPClientManager. A Manager is safe
// for concurrent use.
type Manager struct {
	opts       Options // defaults applied
	clientInfo *mcp.Implementation
	guard      *netguard.Guard
	httpClient *http.Client // guarded
	// dialer opens the connections of the streamable HTTP transport's
	// requests and standing streams (transport.Dialer), dialled as
	// httpClient's are; nil when Options.HTTPClient is given (everything
	// then goes through it).
	dialer *transport.Dialer
	logger *slog.Logger
	clock  Clock

	ctx    context.Context // background work; cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup // background goroutines

	// events delivers events (events.go) in order, on a goroutine of its
	// own, so that a slow listener never blocks the Manager.
	events       *eventq.Queue[Event]
	progressSeq  atomic.Uint64
	connecting   atomic.Int64         // handshakes and discoveries in flight (discover.go)
	connectSlots chan struct{}        // bounds background connections
	aiTools      *aiToolsCache        // schemas and keys for AITools; safe for concurrent use
	hooks        managerHooks         // elicitation, sampling and roots (hooks.go)
	tel          *telemetry.Telemetry // tracer, propagator and instruments (telemetry.go)
	views        views                // ToolView's cache (apps.go)

	starter *stdio.Starter // starts the processes of stdio servers

	// mu guards the fields below.
	mu       sync.Mutex
	servers  map[string]*server
	order    []string // registration order
	closed   bool
	inflight int           // tracked connect and discover operations
	idle     chan struct{} // closed when inflight drops to zero
}

// New returns a Manager. It does no I/O.
func New(opts *Options) *Manager {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = 30 * time.Second
	}
	if o.DiscoverTimeout <= 0 {
		o.DiscoverTimeout = 15 * time.Second
	}
	if o.MaxPages <= 0 {
		o.MaxPages = 100
	}
	if o.MaxConcurrentConnects <= 0 {
		o.MaxConcurrentConnects = 16
	}
	switch {
	case o.StreamIdleTimeout == 0:
		o.StreamIdleTimeout = 5 * time.Minute
	case o.StreamIdleTimeout < 0:
		o.StreamIdleTimeout = 0 // never
	}
	switch {
	case o.MaxMessageSize == 0:
		o.MaxMessageSize = 16 << 20
	case o.MaxMessageSize < 0:
		o.MaxMessageSize = 0 // no cap
	}
	m := &Manager{
		opts:         o,
		clientInfo:   o.ClientInfo,
		httpClient:   o.HTTPClient,
		logger:       o.Logger,
		clock:        o.Clock,
		events:       eventq.New[Event](),
		servers:      map[string]*server{},
		idle:         make(chan struct{}),
		connectSlots: make(chan struct{}, o.MaxConcurrentConnects),
	}
	close(m.idle)
	m.starter = stdio.NewStarter()
	if m.clientInfo == nil {
		m.clientInfo = &mcp.Implementation{Name: "agentmcp", Version: Version}
	}
	m.guard = o.Guard
	if m.guard == nil {
		m.guard, _ = netguard.New(nil, nil) // the default policy always compiles
	}
	base := o.HTTPClient
	if base == nil {
		base = &http.Client{Transport: defaultHTTPTransport(o.ConnectTimeout)}
		m.dialer = newDialer(m.guard, o.Gate)
	}
	if o.Gate != nil {
		// Its requests, and its connections' writes, ask the gate first.
		base = gate.Client(base, m.guard, o.Gate)
	}
	m.httpClient = m.guard.HTTPClient(base)
	m.httpClient.CheckRedirect = transport.StripCrossOrigin(m.httpClient.CheckRedirect)
	if m.logger == nil {
		m.logger = slog.New(slog.DiscardHandler)
	}
	if m.clock == nil {
		m.clock = realClock{}
	}
	m.aiTools = newAIToolsCache(m)
	m.tel = telemetry.New(&telemetry.Options{
		TracerProvider: o.TracerProvider,
		MeterProvider:  o.MeterProvider,
		Propagator:     o.Propagator,
		RecordContent:  o.RecordContent,
		Version:        Version,
		Off:            o.Bench != nil && o.Bench.NoRequestTelemetry,
		ErrorType:      errorType,
		Gauges:         m.gauges,
	})
	m.ctx, m.cancel = context.WithCancel(context.Background())
	return m
}

// defaultHTTPTransport is http.DefaultTransport with the dial bounded, and
// with no cap on idle connections across hosts: each server is a host of
// its own, and past http.DefaultTransport's 100, net/http closes the
// connection a body-less answer (a notification's 202) came on, and can
// fail that very request ("putIdleConn: too many idle connections"), as
// 200 servers connecting at once showed (docs/PERFORMANCE.md). Idle
// connections still close after IdleConnTimeout.
//
// Each connection's write buffer is 1 KiB and its read buffer 512 bytes
// rather than 4 KiB each: a session whose requests go through this client
// (the first request over https, the HTTP+SSE transport's POSTs; the
// others go on the connections of newDialer) keeps the idle connection
// they go on for as long as it lives, and those buffers were most of what
// it held.
// A request's head goes out in one write (a bearer token and the MCP
// headers fit in 1 KiB); a response's head is read in 512-byte steps (an
// MCP server's takes one or two, a longer header line is assembled by
// net/http), and a read of 512 bytes or more past the head goes past the
// buffer (bufio), so calls do not pay for it.
func defaultHTTPTransport(connectTimeout time.Duration) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: connectTimeout, KeepAlive: 30 * time.Second}).DialContext
	t.MaxIdleConnsPerHost = 16
	t.MaxIdleConns = 0
	t.ReadBufferSize = httpReadBufferSize
	t.WriteBufferSize = httpWriteBufferSize
	return t
}

// newDialer returns the dialer of the streamable transport's requests
// and standing streams: the guard's, as the default client's connections
// are, through the environment's proxy as the default client goes, and
// with a gate, one that asks it before each request, before dialling and
// before each write, as the default client does. A request then goes out
// on the caller's goroutine, and an idle session holds sockets rather than
// net/http's pooled connections (two goroutines and two buffers each):
// see transport.Dialer.
func newDialer(guard *netguard.Guard, g func() error) *transport.Dialer {
	// Through a proxy as the default client's requests go: a stream or
	// request a proxy is named for goes through the client.
	d := &transport.Dialer{DialContext: guard.DialContext, Proxy: http.ProxyFromEnvironment}
	if g != nil {
		// Asked before each request, as the gated client asks, and by
		// each connection before each write (gate.Dial).
		d.Gate = func() error {
			if err := g(); err != nil {
				return fmt.Errorf("%w: %w", ErrGateClosed, err)
			}
			return nil
		}
		d.DialContext = gate.Dial(guard.DialContext, g)
	}
	return d
}

// The write and the read buffer of each HTTP connection of the Manager's
// default client.
const (
	httpWriteBufferSize = 1 << 10
	httpReadBufferSize  = 512
)

// RegisterServer registers a server under id without connecting to it.
// Registering an id that is already registered keeps the existing
// connection and its options. It returns id.
func (m *Manager) RegisterServer(ctx context.Context, id string, opts ServerOptions) (string, error) {
	if id == "" {
		return "", errors.New("register mcp server: empty id")
	}
	// The guard judges the host first, as netguard documents: a blocked
	// host is reported as blocked whatever its scheme.
	if opts.URL != "" {
		if err := m.guard.CheckURL(opts.URL); err != nil {
			return "", err
		}
	}
	if err := opts.validate(); err != nil {
		return "", fmt.Errorf("register mcp server %q: %w", id, err)
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return "", ErrClosed
	}
	if _, ok := m.servers[id]; ok {
		m.mu.Unlock()
		return id, nil
	}
	c := newServer(m, id, opts.clone())
	m.servers[id] = c
	m.order = append(m.order, id)
	m.mu.Unlock()
	m.publish(Event{Kind: EventRegistered, ServerID: id, State: StateConnecting})
	return id, nil
}

// ConnectResult is the outcome of one connection attempt.
type ConnectResult struct {
	// State is StateConnected, StateAuthenticating or StateFailed.
	State State
	// AuthURL is where the user must go to authorise, when State is
	// StateAuthenticating and an OAuth provider produced one.
	AuthURL string
	// Err is why the attempt failed (or why authorisation is needed).
	Err error
}

// ConnectToServer makes one connection attempt to a registered server:
// transport, protocol negotiation and handshake, without retry and without
// discovery. An existing session is replaced. A server it leaves failed is
// retried in the background (RetryOptions).
func (m *Manager) ConnectToServer(ctx context.Context, id string) (ConnectResult, error) {
	c, err := m.lookup(id)
	if err != nil {
		return ConnectResult{}, err
	}
	defer m.track()()
	_, epoch := c.current()
	res := c.connectOnce(ctx, false)
	if res.State == StateFailed {
		c.scheduleRetry(epoch)
	}
	return res, nil
}

// EstablishConnection connects a registered server in the background, with
// its RetryOptions, then discovers it: what a restore or a finished
// authorisation needs. At most Options.MaxConcurrentConnects such
// connections run at once. WaitForConnections waits for it.
func (m *Manager) EstablishConnection(id string) error {
	c, err := m.lookup(id)
	if err != nil {
		return err
	}
	c.mu.Lock()
	s := c.sess
	c.mu.Unlock()
	c.startRenew(s, c.retry.MaxAttempts)
	return nil
}

// Reconnect connects a registered server again at once, whatever its
// state, and discovers it: the action behind a Reconnect button. A
// background retry waiting for its time is replaced by this attempt; a
// reconnection already in flight is joined, not repeated; a current
// session is replaced by a fresh handshake (a saved session to resume is
// not used). Stored OAuth tokens and client registrations are kept.
//
// The result is the server's state afterwards: StateReady, StateConnected
// when the discovery failed (Err says why), StateAuthenticating (with
// AuthURL when a flow started) or StateFailed with the error, after which
// the background retry continues. Cancelling ctx stops the wait, not the
// attempt.
func (m *Manager) Reconnect(ctx context.Context, id string) (ConnectResult, error) {
	c, err := m.lookup(id)
	if err != nil {
		return ConnectResult{}, err
	}
	op := c.reconnectNow()
	select {
	case <-op.done:
	case <-ctx.Done():
		return ConnectResult{}, ctx.Err()
	}
	if op.err != nil && (errors.Is(op.err, ErrClosed) || errors.Is(op.err, errClosedMeanwhile)) {
		if m.ctx.Err() != nil {
			return ConnectResult{}, ErrClosed
		}
	}
	info := c.info()
	return ConnectResult{State: info.State, AuthURL: info.AuthURL, Err: info.Error}, nil
}

// FinishAuthorization ends the authorisation a server was waiting for.
// With err nil (the tokens are in place), the pending AuthURL is cleared
// and the server connects in the background, as EstablishConnection.
// Otherwise the server moves to failed with err, which is shown to users
// as it is: sanitise and escape text from authorization servers first.
func (m *Manager) FinishAuthorization(id string, err error) error {
	c, lerr := m.lookup(id)
	if lerr != nil {
		return lerr
	}
	c.mu.Lock()
	c.authURL = ""
	s := c.sess
	c.mu.Unlock()
	if err != nil {
		c.setState(StateFailed, err)
		return nil
	}
	c.startRenew(s, c.retry.MaxAttempts)
	return nil
}

// RenameServer moves a registered server, and its live connection, from
// oldID to newID, with no reconnection. It fails when newID is taken.
func (m *Manager) RenameServer(oldID, newID string) error {
	if oldID == newID {
		return nil
	}
	m.mu.Lock()
	c, ok := m.servers[oldID]
	_, taken := m.servers[newID]
	switch {
	case m.closed:
		m.mu.Unlock()
		return ErrClosed
	case !ok:
		m.mu.Unlock()
		return fmt.Errorf("%w: %q", ErrNotRegistered, oldID)
	case taken:
		m.mu.Unlock()
		return fmt.Errorf("rename mcp server %q: %q is already registered", oldID, newID)
	}
	delete(m.servers, oldID)
	m.servers[newID] = c
	m.order[slices.Index(m.order, oldID)] = newID
	c.idp.Store(&newID)
	m.mu.Unlock()
	info := c.info()
	m.forgetViews(oldID)
	m.publish(Event{Kind: EventRemoved, ServerID: oldID})
	m.publish(Event{Kind: EventRegistered, ServerID: newID, State: info.State})
	return nil
}

// Guard returns the Manager's SSRF guard.
func (m *Manager) Guard() *netguard.Guard { return m.guard }

// HTTPClient returns the Manager's HTTP client, guarded by its SSRF policy,
// for other requests made on the servers' behalf (OAuth).
func (m *Manager) HTTPClient() *http.Client { return m.httpClient }

// CheckURL reports whether url may be registered: an http or https URL
// that the SSRF guard accepts. The guard judges the host first, so a
// blocked host is reported as blocked (netguard.ErrBlockedURL) whatever
// its scheme.
func (m *Manager) CheckURL(url string) error {
	if err := m.guard.CheckURL(url); err != nil {
		return err
	}
	return (&ServerOptions{URL: url}).validate()
}

// DiscoverOptions configures DiscoverIfConnected.
type DiscoverOptions struct {
	// Timeout bounds the whole discovery. Zero means Options.DiscoverTimeout
	// (15 s by default).
	Timeout time.Duration
}

// DiscoverResult is the outcome of a discovery.
type DiscoverResult struct {
	Success bool
	State   State
	Err     error
}

// DiscoverIfConnected fetches the server's catalog when it is connected or
// ready (a manual refresh), moving it to ready. A failed discovery leaves it
// connected (or authenticating on 401), never failed, so it can be retried.
// A new discovery cancels one in flight for the same server. A failed
// server gets one reconnection attempt first (which discovers), and a
// resumed session whose server turns out to be unreachable is a failed
// connection, retried as the server's RetryOptions say. A renewal in
// flight is waited for; when it connects but its own discovery failed,
// the discovery is made again (it may have been sent before whatever
// made the caller ask).
func (m *Manager) DiscoverIfConnected(ctx context.Context, id string, opts *DiscoverOptions) (DiscoverResult, error) {
	c, err := m.lookup(id)
	if err != nil {
		return DiscoverResult{}, err
	}
	timeout := m.opts.DiscoverTimeout
	if opts != nil && opts.Timeout > 0 {
		timeout = opts.Timeout
	}
	defer m.track()()
	c.mu.Lock()
	op := c.renewing
	if op == nil && c.state == StateFailed && c.sess == nil {
		c.mu.Unlock()
		op = c.startRenew(nil, 1)
	} else {
		c.mu.Unlock()
	}
	// A renewal in flight when the caller asked: its discovery may have
	// been sent before the caller's reason to ask (a server mended since).
	joined := op != nil
	var res DiscoverResult
	if op == nil {
		res = c.discover(ctx, timeout)
		switch {
		case res.Success:
			return res, nil
		case res.State == StateFailed:
			// A resumed session whose server is gone: the first attempt
			// failed; the retry policy makes the others.
			if n := c.retry.MaxAttempts - 1; n > 0 {
				c.startRenew(nil, n)
			} else {
				_, epoch := c.current()
				c.scheduleRetry(epoch)
			}
		}
		// The session had expired, or dropped during the discovery: a
		// renewal, which discovers again, is under way. Report that
		// discovery.
		c.mu.Lock()
		op = c.renewing
		c.mu.Unlock()
		if op == nil && res.State != StateFailed && !isSessionLost(res.Err) {
			return res, nil
		}
	}
	if op != nil {
		select {
		case <-op.done:
		case <-ctx.Done():
			return DiscoverResult{State: c.info().State, Err: ctx.Err()}, nil
		}
	}
	info := c.info()
	if joined && info.State == StateConnected {
		// The renewal connected but its discovery failed: this caller's
		// discovery is one of its own, not the renewal's older one.
		return c.discover(ctx, timeout), nil
	}
	return DiscoverResult{Success: info.State == StateReady, State: info.State, Err: info.Error}, nil
}

// WaitForConnections waits until no connection or discovery work is in
// flight (including background reconnection and catalog refreshes) and
// the listeners have been told about it, or until ctx is done. It returns
// at once when nothing is pending.
func (m *Manager) WaitForConnections(ctx context.Context) {
	for {
		m.mu.Lock()
		if m.inflight == 0 {
			m.mu.Unlock()
			m.events.Flush(ctx)
			return
		}
		idle := m.idle
		m.mu.Unlock()
		select {
		case <-idle:
		case <-ctx.Done():
			return
		}
	}
}

// track counts one operation for WaitForConnections; call the result when
// it ends.
func (m *Manager) track() (done func()) {
	m.mu.Lock()
	if m.inflight == 0 {
		m.idle = make(chan struct{})
	}
	m.inflight++
	m.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			m.mu.Lock()
			m.inflight--
			if m.inflight == 0 {
				close(m.idle)
			}
			m.mu.Unlock()
		})
	}
}

// goTracked runs fn in the background, counted by WaitForConnections and
// stopped by Close. It reports false, running nothing, after Close.
func (m *Manager) goTracked(fn func(ctx context.Context)) bool {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return false
	}
	m.wg.Add(1)
	m.mu.Unlock()
	done := m.track()
	go func() {
		defer m.wg.Done()
		defer done()
		fn(m.ctx)
	}()
	return true
}

// goBackground runs fn in the background, waited for by Close but not
// counted by WaitForConnections (a background retry waiting for its time).
// It reports false, running nothing, after Close.
func (m *Manager) goBackground(fn func()) bool {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return false
	}
	m.wg.Add(1)
	m.mu.Unlock()
	go func() {
		defer m.wg.Done()
		fn()
	}()
	return true
}

// CloseConnection closes the server's session and keeps it registered, in
// state not-connected. ConnectToServer connects it again.
func (m *Manager) CloseConnection(ctx context.Context, id string) error {
	c, err := m.lookup(id)
	if err != nil {
		return err
	}
	return c.close(ctx, StateNotConnected, false)
}

// CloseAllConnections closes every session, keeping the registrations. It
// closes them all even when some fail, and returns the failures joined.
func (m *Manager) CloseAllConnections(ctx context.Context) error {
	return m.closeAll(ctx, false)
}

// closeAll closes every session; keep leaves them alive on the servers.
func (m *Manager) closeAll(ctx context.Context, keep bool) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, c := range m.snapshot() {
		wg.Go(func() {
			if err := c.close(ctx, StateNotConnected, keep); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("closing mcp server %q: %w", c.ID(), err))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// RemoveServer closes the server's session and forgets it. An unknown id
// is not an error.
func (m *Manager) RemoveServer(ctx context.Context, id string) error {
	m.mu.Lock()
	c, ok := m.servers[id]
	if ok {
		delete(m.servers, id)
		m.order = slices.DeleteFunc(m.order, func(s string) bool { return s == id })
	}
	m.mu.Unlock()
	var err error
	if ok {
		err = c.close(ctx, "", false)
		m.forgetViews(id)
	}
	m.publish(Event{Kind: EventRemoved, ServerID: id})
	return err
}

// Close closes every connection, stops background work and event delivery,
// and waits for them, at most until ctx is done. Close is idempotent; after
// it, methods return ErrClosed.
//
// By default, unlike CloseAllConnections, Close does not end the servers'
// sessions (no DELETE on streamable HTTP), so that a process that restarts
// can resume them (ServerInfo.Resume); servers expire sessions that are
// never resumed. With Options.EndSessionsOnClose, Close ends them, as a
// caller that will not resume them should. Stdio, SSE and in-process
// sessions end with their connection either way.
func (m *Manager) Close(ctx context.Context) error {
	m.mu.Lock()
	already := m.closed
	m.closed = true
	m.mu.Unlock()
	if already {
		return nil
	}
	m.cancel()
	m.tel.Close()
	err := m.closeAll(ctx, !m.opts.EndSessionsOnClose)
	done := make(chan struct{})
	go func() {
		m.wg.Wait()
		m.starter.Close() // once every stdio server's process is reaped
		m.events.Stop()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		return errors.Join(err, fmt.Errorf("closing mcp client manager: %w", ctx.Err()))
	}
	// The guard cloned the transport, so its idle connections are ours;
	// so are the dialer's.
	m.httpClient.CloseIdleConnections()
	if m.dialer != nil {
		m.dialer.CloseIdleConnections()
	}
	return err
}

// OnServerStateChanged calls fn after every change to any server: state,
// catalog, registration, removal. Calls are made in order on a goroutine of
// the Manager's; fn should return quickly. The result removes fn.
func (m *Manager) OnServerStateChanged(fn func()) (dispose func()) {
	return m.events.Subscribe(func(Event) { fn() })
}

// Subscribe is OnServerStateChanged with the details of each change.
func (m *Manager) Subscribe(fn func(Event)) (dispose func()) {
	return m.events.Subscribe(fn)
}

func (m *Manager) publish(ev Event) { m.events.Publish(ev) }

// lookup returns the connection registered under id.
func (m *Manager) lookup(id string) (*server, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrClosed
	}
	c, ok := m.servers[id]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrNotRegistered, id)
	}
	return c, nil
}

// snapshot returns the registered connections in registration order.
func (m *Manager) snapshot() []*server {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*server, 0, len(m.order))
	for _, id := range m.order {
		out = append(out, m.servers[id])
	}
	return out
}

// ServerInfo is a snapshot of one registered server.
type ServerInfo struct {
	ID    string
	Name  string
	URL   string // the URL, for HTTP servers, without query or userinfo
	State State
	// Error is the last handshake or discovery error, nil when the last
	// attempt succeeded.
	Error error
	// Transport is the transport of the current (or last) session.
	Transport TransportType
	// ProtocolVersion is the negotiated protocol version.
	ProtocolVersion string
	// SessionID is the legacy streamable HTTP session id, if any.
	SessionID string
	// AuthURL is the pending authorisation URL, in state authenticating.
	AuthURL string
	// CatalogStale is set while the server's lists are the stored ones of
	// ServerOptions.Catalog, which the server has not listed again yet.
	CatalogStale bool
	// NextRetryAt is when the next connection attempt of a failed server
	// is due (by Options.Clock): a retry waiting for its backoff, after a
	// drop, on a restore or in the background (RetryOptions). It is zero
	// when no attempt waits (a server that is not failed, or whose retries
	// are spent and DisableBackground set). Each new wait is reported by
	// an EventRetryScheduled.
	NextRetryAt time.Time
	// ServerInfo, Capabilities and Instructions come from the handshake.
	ServerInfo   *mcp.Implementation
	Capabilities *mcp.ServerCapabilities
	Instructions string

	// Resume is what it takes to resume the current session after a
	// restart (ServerOptions.Resume), or nil when it cannot be resumed
	// (in-process and SSE sessions end with the stream). A stdio server's
	// holds only the legacy version it spoke, if it did: its next process
	// is spoken to in that era at once.
	Resume *Resume

	// Advertised are the client capabilities the current session
	// advertised (in its handshake, and in 2026-07-28 with every request),
	// or nil without a session.
	Advertised *mcp.ClientCapabilities
	// Elicitation is the elicitation capability a new session of the
	// server would advertise: the modes of the Manager's elicitation
	// handlers or, until they are first configured, the server's unspent
	// seed (ClientOptions.Capabilities.Elicitation). Store it with the
	// server and give it back as the seed after a restart, so that a
	// restored session advertises what the previous process did before
	// the application configures its handlers again. It changes with an
	// EventAdvertisementChanged.
	Elicitation *mcp.ElicitationCapabilities
}

// Server returns a snapshot of the server registered under id.
func (m *Manager) Server(id string) (ServerInfo, bool) {
	c, err := m.lookup(id)
	if err != nil {
		return ServerInfo{}, false
	}
	return c.info(), true
}

// Servers returns snapshots of every registered server, in registration
// order.
func (m *Manager) Servers() []ServerInfo {
	servers := m.snapshot()
	out := make([]ServerInfo, 0, len(servers))
	for _, c := range servers {
		out = append(out, c.info())
	}
	return out
}
