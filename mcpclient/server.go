//lint:file-ignore SA1019 roots, sampling and logging are deprecated from 2026-07-28 on (SEP-2577); agentmcp speaks the earlier eras too, which have them

package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentmcp/agentmcp/internal/callstats"
	"github.com/agentmcp/agentmcp/internal/safetext"
	"github.com/agentmcp/agentmcp/mcpclient/internal/backoff"
	"github.com/agentmcp/agentmcp/mcpclient/stdio"
	"github.com/agentmcp/agentmcp/mcpclient/transport"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// server is one registered server: its options, its state machine, its
// current session and its catalog.
type server struct {
	m     *Manager
	idp   atomic.Pointer[string] // the server id; RenameServer changes it
	opts  ServerOptions
	retry RetryOptions

	// dial serialises handshakes (a one-slot semaphore, so that waiting for
	// it honours contexts).
	dial chan struct{}

	// progress maps progress tokens of calls in flight to their callbacks.
	progress sync.Map // string -> func(*mcp.ProgressNotificationParams)

	// taskWake maps the ids of the tasks being waited for to a channel
	// that a status notification wakes (tasks.go); tasksSeen is set once
	// a session of the server took tasks, so that a call to a server that
	// never did costs one atomic load for them.
	taskWake  sync.Map // string -> chan struct{}
	tasksSeen atomic.Bool

	// mu guards the fields below. It is never held across I/O or callbacks.
	mu             sync.Mutex
	state          State
	err            error
	sess           *session
	cat            *catalog // replaced, never mutated
	authURL        string
	removed        bool
	renewing       *renewOp
	discoverGen    uint64
	discoverCancel context.CancelFunc
	latched        TransportType // under TransportAuto, the transport that last worked
	last           sessionInfo   // of the current or last session
	refresh        [3]refreshState
	// listGen counts list_changed notifications, per kind; catGen is the
	// listGen at the start of the fetch that produced each current list.
	// A fetch that started later saw a newer server state, so a list is
	// only replaced by one fetched no earlier.
	listGen [3]uint64
	catGen  [3]uint64

	// hooks is the server's part in elicitation, sampling and roots
	// (hooks.go).
	hooks serverHooks

	// life bounds the connection work of the current epoch: handshakes,
	// retries, background retries and discoveries. Closing the connection
	// cancels it and starts a new epoch, so that work started before can
	// never bring the server back.
	life       context.Context
	lifeCancel context.CancelFunc
	epoch      uint64
	// bg is the background retry waiting, if any; bgRound counts the
	// background attempts since the server was last connected.
	bg      *bgRetry
	bgRound int
	// retryAt is when the next attempt of a failed server is due (a retry
	// waiting for its backoff, in the foreground or the background), zero
	// when none waits. Every state change clears it.
	retryAt time.Time

	starts backoff.Pacer // paces a stdio server's restarts (stdiostarts.go)
	// stderr bounds the logging of a stdio server's stderr across its
	// restarts (stdiostarts.go); made at the first start.
	stderr atomic.Pointer[stdio.LineLimiter]

	outputs outputSchemas // its tools' compiled output schemas (output.go)

	stats callstats.Window // its tool calls' figures (serverstats.go)
	logs  serverLogs       // the last log messages it sent (serverlogs.go)
}

// bgRetry is a background retry waiting for its time.
type bgRetry struct{ cancel context.CancelFunc }

// session is one MCP session.
type session struct {
	cs        *mcp.ClientSession
	conn      mcp.Connection     // the connection under cs (a sessionConn, or go-sdk's own)
	raw       mcp.Connection     // the transport's own connection, for its optional interfaces
	ss        *mcp.ServerSession // the server side, for in-process servers
	transport TransportType

	// Guarded by the server's mu:
	installed bool    // it became the server's session
	pending   [3]bool // lists the server changed before it was installed

	hooks *sessionHooks // its client and what it advertised (hooks.go)

	tasks sessionTasks // what it knows of tasks (taskwire.go)

	// unverified marks a resumed session that has not yet exchanged a
	// message with the server: its first exchange decides whether the
	// server is still there (guarded by the server's mu).
	unverified bool

	// idBase is added to the JSON-RPC ids of the client's requests: 0 for
	// a new session, random and large for a resumed one, whose requests
	// must not reuse the ids of the process that opened it (a request it
	// left running on the server would refuse them as duplicates).
	idBase int64

	sessionTel // mcp.client.session.duration (telemetry.go)
}

// sessionInfo describes the current or last session.
type sessionInfo struct {
	transport       TransportType
	protocolVersion string
	sessionID       string
	init            *mcp.InitializeResult
}

// catalog is what a discovery found.
type catalog struct {
	known bool // a discovery found it (not the empty one of a server never discovered)
	stale bool // stored before a restart (ServerOptions.Catalog), not confirmed by the server yet
	// size is the JSON size of tools, computed on first use (ToolsSize);
	// a catalog whose tools change gets a new one.
	size      *toolsSize
	tools     []*mcp.Tool
	prompts   []*mcp.Prompt
	resources []*mcp.Resource
	templates []*mcp.ResourceTemplate
}

// renewOp is a session renewal in flight, shared by everyone who needs it.
type renewOp struct {
	done chan struct{}
	err  error
}

func newServer(m *Manager, id string, opts ServerOptions) *server {
	retry, _ := opts.Retry.withDefaults() // validated by RegisterServer
	c := &server{
		m:     m,
		opts:  opts,
		retry: retry,
		dial:  make(chan struct{}, 1),
		state: StateConnecting,
		cat:   storedCatalog(opts.Catalog),
	}
	if opts.PendingAuthURL != "" {
		c.state, c.authURL = StateAuthenticating, opts.PendingAuthURL
	}
	if r := opts.Resume; r != nil && opts.Command != nil {
		c.last = sessionInfo{transport: TransportStdio, protocolVersion: r.ProtocolVersion} // the era it last spoke
	} else if r.Valid() {
		// The era is known from the saved session, even if the session
		// itself turns out to be gone.
		c.last = sessionInfo{transport: TransportStreamableHTTP, protocolVersion: r.ProtocolVersion}
	}
	c.life, c.lifeCancel = context.WithCancel(m.ctx)
	c.idp.Store(&id)
	return c
}

// ID returns the server's id.
func (c *server) ID() string { return *c.idp.Load() }

// setState moves to state with err and publishes the change.
func (c *server) setState(state State, err error) {
	c.mu.Lock()
	if c.removed {
		c.mu.Unlock()
		return
	}
	c.state, c.err, c.retryAt = state, err, time.Time{}
	c.mu.Unlock()
	c.m.publish(Event{Kind: EventStateChanged, ServerID: c.ID(), State: state, Err: err})
}

// setStateAt is setState for work of epoch: it does nothing, and reports
// false, once the connection was closed since.
func (c *server) setStateAt(epoch uint64, state State, err error) bool {
	c.mu.Lock()
	if c.removed || c.epoch != epoch {
		c.mu.Unlock()
		return false
	}
	c.state, c.err, c.retryAt = state, err, time.Time{}
	c.mu.Unlock()
	c.m.publish(Event{Kind: EventStateChanged, ServerID: c.ID(), State: state, Err: err})
	return true
}

// retryDue notes that the next attempt of a failed server of epoch is due
// in d, and publishes an EventRetryScheduled; it does nothing once the
// connection was closed or the state changed since.
func (c *server) retryDue(epoch uint64, d time.Duration) {
	c.mu.Lock()
	if c.removed || c.epoch != epoch || c.state != StateFailed {
		c.mu.Unlock()
		return
	}
	c.retryAt = c.m.clock.Now().Add(d)
	err := c.err
	c.mu.Unlock()
	c.m.publish(Event{Kind: EventRetryScheduled, ServerID: c.ID(), State: StateFailed, Err: err})
}

// current returns the epoch and its context.
func (c *server) current() (context.Context, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.life, c.epoch
}

// errClosedMeanwhile is the outcome of a connect that a CloseConnection
// (or RemoveServer) cancelled.
var errClosedMeanwhile = errors.New("the connection was closed while connecting")

// closedResult is the outcome of a connect cancelled by a close.
func (c *server) closedResult() ConnectResult {
	c.mu.Lock()
	state := c.state
	c.mu.Unlock()
	return ConnectResult{State: state, Err: errClosedMeanwhile}
}

// connectOnceUntraced is connectOnce (telemetry.go): it makes one handshake, replacing any current session. A close
// of the connection cancels it; it then changes nothing. With discoverNext
// (the caller discovers at once), a resumed session, which the handshake
// did not check with the server, is shown discovering, not connected:
// whether it is connected is for its first exchange to tell.
func (c *server) connectOnceUntraced(ctx context.Context, discoverNext bool) ConnectResult {
	life, epoch := c.current()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(life, cancel)()
	select {
	case c.dial <- struct{}{}:
	case <-ctx.Done():
		if life.Err() != nil {
			return c.closedResult()
		}
		return ConnectResult{State: StateFailed, Err: ctx.Err()}
	}
	defer func() { <-c.dial }()

	c.mu.Lock()
	if c.removed {
		c.mu.Unlock()
		return ConnectResult{State: StateFailed, Err: ErrNotRegistered}
	}
	if c.epoch != epoch {
		c.mu.Unlock()
		return c.closedResult()
	}
	old := c.sess
	c.sess = nil
	c.mu.Unlock()
	if old != nil {
		old.close()
	}

	c.mu.Lock()
	resumed := c.opts.Resume.Valid()
	c.mu.Unlock()
	s, err := c.handshake(ctx)
	if err != nil && life.Err() != nil {
		return c.closedResult()
	}
	if err != nil && resumed && isSessionLost(err) && ctx.Err() == nil {
		// The saved session is gone, and the server said so before the
		// locally answered handshake was over (its GET stream, say): a
		// fresh handshake, once (the saved session is used only once).
		s, err = c.handshake(ctx)
	}
	if err != nil && IsUnauthorized(err) && c.opts.Auth != nil {
		authURL, aerr := c.authorize(ctx, err)
		switch {
		case aerr != nil:
			err = aerr
		case authURL != "":
			if !c.setAuthenticatingAt(epoch, authURL, err) {
				return c.closedResult()
			}
			return ConnectResult{State: StateAuthenticating, AuthURL: authURL, Err: err}
		default:
			// New credentials without a user: try once more.
			s, err = c.handshake(ctx)
		}
	}
	if err != nil {
		if life.Err() != nil {
			return c.closedResult()
		}
		if IsUnauthorized(err) {
			c.mu.Lock()
			authURL := c.authURL
			c.mu.Unlock()
			if !c.setStateAt(epoch, StateAuthenticating, err) {
				return c.closedResult()
			}
			return ConnectResult{State: StateAuthenticating, AuthURL: authURL, Err: err}
		}
		if !c.setStateAt(epoch, StateFailed, err) {
			return c.closedResult()
		}
		return ConnectResult{State: StateFailed, Err: err}
	}

	c.mu.Lock()
	if c.removed || c.epoch != epoch {
		removed := c.removed
		c.mu.Unlock()
		s.close()
		if removed {
			return ConnectResult{State: StateFailed, Err: ErrNotRegistered}
		}
		return c.closedResult()
	}
	c.bgRound = 0
	c.sess = s
	s.installed = true
	s.sessionStarted(time.Now())
	pending := s.pending
	init := s.cs.InitializeResult()
	c.last = sessionInfo{transport: s.transport, protocolVersion: init.ProtocolVersion, sessionID: s.cs.ID(), init: init}
	if c.opts.transportType() == TransportAuto {
		c.latched = s.transport
	}
	c.authURL = ""
	c.mu.Unlock()
	c.noteTasks(s)
	if s.unverified && discoverNext {
		c.setStateAt(epoch, StateDiscovering, nil)
	} else {
		c.setStateAt(epoch, StateConnected, nil)
	}
	for kind, changed := range pending {
		if changed {
			c.listChanged(s, kind)
		}
	}

	c.m.wg.Add(1)
	go func() {
		defer c.m.wg.Done()
		err := s.cs.Wait()
		c.sessionEnded(s, err)
	}()
	return ConnectResult{State: StateConnected}
}

// setAuthenticatingAt is setAuthenticating for work of epoch.
func (c *server) setAuthenticatingAt(epoch uint64, authURL string, err error) bool {
	c.mu.Lock()
	if c.removed || c.epoch != epoch {
		c.mu.Unlock()
		return false
	}
	c.authURL = authURL
	c.mu.Unlock()
	return c.setStateAt(epoch, StateAuthenticating, err)
}

// sessionEnded is called when a session's connection closes. If it was
// still the current session, the connection dropped: reconnect.
func (c *server) sessionEnded(s *session, err error) {
	c.mu.Lock()
	current := c.sess == s && !c.removed
	c.mu.Unlock()
	if !current {
		return
	}
	if err != nil {
		s.dropped.Store(err)
	}
	c.m.logger.Info("mcp connection dropped; reconnecting", "server", c.ID(), "error", err)
	c.startRenew(s, c.retry.MaxAttempts)
}

// startRenew replaces the session old with a new one, in the background,
// making up to attempts attempts (with the server's backoff between them).
// Concurrent callers share one renewal. When the attempts are spent and
// the server is failed, the background retry takes over.
func (c *server) startRenew(old *session, attempts int) *renewOp {
	c.mu.Lock()
	if op := c.renewing; op != nil {
		c.mu.Unlock()
		return op
	}
	op := &renewOp{done: make(chan struct{})}
	switch {
	case c.removed || c.m.ctx.Err() != nil:
		op.err = ErrClosed
	case c.sess != nil && c.sess != old:
		// Someone already replaced it.
	case c.sess == nil && old != nil && c.state != StateConnecting:
		// Closed on purpose, or a renewal already failed.
		op.err = fmt.Errorf("%w: %q is %s", ErrNotConnected, c.ID(), c.state)
	default:
		c.renewing = op
		c.sess = nil
		if c.bg != nil {
			c.bg.cancel() // this attempt is the next one
			c.bg = nil
		}
		life, epoch := c.life, c.epoch
		c.mu.Unlock()
		if old != nil {
			old.close()
		}
		c.setStateAt(epoch, StateConnecting, nil)
		finish := func(err error) {
			c.mu.Lock()
			if c.renewing == op {
				c.renewing = nil
			}
			c.mu.Unlock()
			op.err = err
			close(op.done)
		}
		if !c.m.goTracked(func(context.Context) {
			ctx, end := c.renewSpan(life, attempts)
			err := c.reconnect(ctx, epoch, attempts)
			end(err)
			finish(err)
			c.scheduleRetry(epoch)
		}) {
			finish(ErrClosed)
		}
		return op
	}
	c.mu.Unlock()
	close(op.done)
	return op
}

// reconnect connects with retry and discovers. It is the seed's
// "connect with retry, then discover" used for restores and drops. A
// resumed session counts as connected only once its first exchange (the
// discovery) went through: a server that cannot be reached fails the
// attempt, and one that rejects the session gets one fresh handshake.
func (c *server) reconnect(ctx context.Context, epoch uint64, attempts int) error {
	attempts = max(attempts, 1)
	var res ConnectResult
	stale := false // a resumed session turned out to be gone
	for k := 1; ; k++ {
		select {
		case c.m.connectSlots <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		res = c.connectOnce(ctx, true)
		var d DiscoverResult
		if res.State == StateConnected {
			d = c.discover(ctx, c.m.opts.DiscoverTimeout)
			if d.State == StateFailed {
				// A resumed session whose server cannot be reached.
				res = ConnectResult{State: StateFailed, Err: d.Err}
			}
		}
		<-c.m.connectSlots
		c.noteAttempt(ctx, k, res)
		if errors.Is(res.Err, errClosedMeanwhile) || ctx.Err() != nil {
			return errClosedMeanwhile
		}
		lost := (res.State == StateFailed && isSessionLost(res.Err)) ||
			(res.State == StateConnected && !d.Success && isSessionLost(d.Err))
		if lost && !stale {
			// The session (a resumed one, typically) is unknown to the
			// server: one fresh handshake, at once.
			stale = true
			k--
			continue
		}
		if res.State == StateConnected {
			// A failed discovery leaves the server connected, and usable;
			// its own state and error report it.
			return nil
		}
		if res.State == StateAuthenticating || k >= attempts {
			return res.Err
		}
		wait := backoff.Full(c.retry.BaseDelay, k, c.retry.MaxDelay)
		c.retryDue(epoch, wait)
		select {
		case <-c.m.clock.After(wait):
		case <-ctx.Done():
			return errClosedMeanwhile
		}
		c.mu.Lock()
		stop := c.removed || c.epoch != epoch || c.state != StateFailed
		c.mu.Unlock()
		if stop {
			return res.Err // closed or replaced meanwhile
		}
		c.setStateAt(epoch, StateConnecting, res.Err)
	}
}

// scheduleRetry starts the background retry of a server that is failed
// after its attempts were spent: one attempt after a capped, jittered
// backoff (RetryOptions.BackgroundMaxDelay), and again after each failure,
// until the server is connected, closed or removed. It is not counted by
// WaitForConnections.
func (c *server) scheduleRetry(epoch uint64) {
	if c.retry.DisableBackground {
		return
	}
	c.mu.Lock()
	if c.removed || c.epoch != epoch || c.bg != nil || c.renewing != nil || c.state != StateFailed || c.m.ctx.Err() != nil {
		c.mu.Unlock()
		return
	}
	ctx, cancel := context.WithCancel(c.life)
	bg := &bgRetry{cancel: cancel}
	c.bg = bg
	c.bgRound++
	// The backoff goes on doubling from where the MaxAttempts attempts
	// left it, capped at BackgroundMaxDelay, with equal jitter.
	d := backoff.Equal(c.retry.BaseDelay, c.retry.MaxAttempts+c.bgRound-1, c.retry.BackgroundMaxDelay)
	c.mu.Unlock()
	c.m.logger.Info("mcp server unreachable; retrying in the background", "server", c.ID(), "in", d.Round(time.Millisecond))
	c.retryDue(epoch, d)
	ok := c.m.goBackground(func() {
		defer cancel()
		var fire bool
		select {
		case <-c.m.clock.After(d):
			fire = true
		case <-ctx.Done():
		}
		c.mu.Lock()
		mine := c.bg == bg
		if mine {
			c.bg = nil
			c.retryAt = time.Time{}
		}
		fire = fire && mine && c.epoch == epoch && !c.removed && c.renewing == nil && c.state == StateFailed && c.sess == nil
		c.mu.Unlock()
		if fire {
			c.startRenew(nil, 1)
		}
	})
	if !ok {
		cancel()
		c.mu.Lock()
		if c.bg == bg {
			c.bg = nil
		}
		c.mu.Unlock()
	}
}

// liveSession returns the current session, waiting for a renewal in
// flight to finish. A failed server gets one reconnection attempt first
// (bounded by ctx and the connect and discovery timeouts).
func (c *server) liveSession(ctx context.Context) (*session, error) {
	c.mu.Lock()
	s, op, state, err := c.sess, c.renewing, c.state, c.err
	c.mu.Unlock()
	if s != nil {
		return s, nil
	}
	if op == nil && state == StateFailed {
		op = c.startRenew(nil, 1)
	}
	if op != nil {
		select {
		case <-op.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		c.mu.Lock()
		s, state, err = c.sess, c.state, c.err
		c.mu.Unlock()
		if s != nil {
			return s, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %q is %s: %w", ErrNotConnected, c.ID(), state, err)
	}
	return nil, fmt.Errorf("%w: %q is %s", ErrNotConnected, c.ID(), state)
}

// reconnectNow is Manager.Reconnect: a new session at once, whatever the
// state, joining a renewal in flight rather than starting another.
func (c *server) reconnectNow() *renewOp {
	c.mu.Lock()
	c.opts.Resume = nil // a fresh handshake, never a saved session
	s := c.sess
	c.mu.Unlock()
	return c.startRenew(s, 1)
}

// noteCallError starts a reconnection when a call failed because the
// server could not be reached: a 2026-07-28 connection has no stream that
// would notice otherwise.
func (c *server) noteCallError(s *session, err error) {
	if transport.IsUnreachable(err) {
		c.startRenew(s, c.retry.MaxAttempts)
	}
}

// close ends the session and cancels the connection work in flight
// (connects, retries, the background retry, discoveries), which then
// changes nothing. With state "" the server is being removed; otherwise
// it stays registered in that state. With keep, the server is not told (no
// DELETE), so the session can be resumed later.
func (c *server) close(ctx context.Context, state State, keep bool) error {
	c.mu.Lock()
	s := c.sess
	c.sess = nil
	if c.discoverCancel != nil {
		c.discoverCancel()
		c.discoverCancel = nil
	}
	c.discoverGen++
	c.lifeCancel()
	c.life, c.lifeCancel = context.WithCancel(c.m.ctx)
	c.epoch++
	c.bg, c.bgRound, c.retryAt = nil, 0, time.Time{}
	c.renewing = nil // the one in flight ends at once, changing nothing
	if state == "" {
		c.removed = true
	}
	c.cat = &catalog{}
	c.mu.Unlock()
	if state != "" {
		c.setState(state, nil)
	}
	if s == nil {
		return nil
	}
	done := make(chan error, 1)
	go func() {
		if keep {
			s.keep()
		}
		done <- s.close()
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// keep makes close leave the server's session alive, for resumption.
func (s *session) keep() {
	if k, ok := s.raw.(transport.SessionKeeper); ok {
		k.KeepSession()
	}
}

// close ends the session. The transport goes first, which fails the calls
// in flight; go-sdk's ClientSession.Close would otherwise wait for them.
func (s *session) close() error {
	s.recordSessionEnd()
	err := s.conn.Close()
	if cerr := s.cs.Close(); err == nil {
		err = cerr
	}
	if s.ss != nil {
		s.ss.Close()
	}
	if errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

// info returns a snapshot of the server.
func (c *server) info() ServerInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	si := ServerInfo{
		ID:              c.ID(),
		Name:            c.opts.Name,
		URL:             safetext.RawURL(c.opts.URL),
		State:           c.state,
		Error:           c.err,
		Transport:       c.last.transport,
		ProtocolVersion: c.last.protocolVersion,
		SessionID:       c.last.sessionID,
		AuthURL:         c.authURL,
		CatalogStale:    c.cat.stale,
	}
	if c.state == StateFailed {
		si.NextRetryAt = c.retryAt
	}
	if init := c.last.init; init != nil && c.sess != nil {
		si.ServerInfo = init.ServerInfo
		si.Capabilities = init.Capabilities
		si.Instructions = init.Instructions
		r := &Resume{ProtocolVersion: init.ProtocolVersion, SessionID: c.last.sessionID, Result: init}
		resumable := c.last.transport == TransportStreamableHTTP && c.opts.Transport.Implementation != ImplementationGoSDK && r.Valid()
		legacyStdio := c.last.transport == TransportStdio && r.ProtocolVersion < protocolModern // the era a restart starts in
		if resumable || legacyStdio {
			si.Resume = r
		}
	}
	c.clientInfoLocked(&si)
	return si
}

// handshake connects a new session over the server's transport.
func (c *server) handshake(ctx context.Context) (*session, error) {
	c.m.connecting.Add(1) // see fetchCatalog
	defer c.m.connecting.Add(-1)
	ctx, cancel := context.WithTimeout(ctx, c.m.opts.ConnectTimeout)
	defer cancel()
	defer context.AfterFunc(c.m.ctx, cancel)()

	switch t := c.opts.transportType(); t {
	case TransportAuto:
		c.mu.Lock()
		first, second := TransportStreamableHTTP, TransportSSE
		if c.latched == TransportSSE {
			first, second = second, first
		}
		c.mu.Unlock()
		s, err := c.handshakeOver(ctx, first)
		if err == nil || !triesOtherTransport(err) {
			return s, err
		}
		c.m.logger.Info("mcp server refused the transport; trying the other", "server", c.ID(), "tried", first, "next", second, "error", err)
		s, err2 := c.handshakeOver(ctx, second)
		if err2 != nil {
			return nil, fmt.Errorf("%s failed: %v; then %s failed: %w", first, err, second, err2)
		}
		return s, nil
	default:
		return c.handshakeOver(ctx, t)
	}
}

// handshakeOver connects over transport t.
func (c *server) handshakeOver(ctx context.Context, t TransportType) (*session, error) {
	version := c.opts.Client.ProtocolVersion
	c.mu.Lock()
	last := c.last
	c.mu.Unlock()
	if version == "" && last.transport == t && last.protocolVersion != "" && last.protocolVersion < protocolModern {
		// The era is a property of the server: once it spoke a legacy
		// version, a new session skips the 2026-07-28 probe.
		version = protocolLegacy
	}
	// A server known to speak 2026-07-28 (pinned, or its last session
	// did) has its subscriptions/listen sent beside server/discover: the
	// probe of a server of unknown era may find a legacy server, which
	// would only refuse it.
	modern := version >= protocolModern || (version == "" && last.transport == t && last.protocolVersion >= protocolModern)
	s := &session{transport: t}
	var tr mcp.Transport
	switch t {
	case TransportStreamableHTTP:
		c.mu.Lock()
		resume := c.opts.Resume
		c.opts.Resume = nil // used once
		c.mu.Unlock()
		if c.opts.Transport.Implementation == ImplementationGoSDK {
			tr = c.sdkStreamableTransport()
			break
		}
		life, _ := c.current()
		if resume.Valid() {
			version = resume.ProtocolVersion
			s.unverified = true
			s.idBase = resumedIDBase()
		} else {
			resume = nil
		}
		tr = &transport.Streamable{
			Endpoint:       c.opts.URL,
			HTTPClient:     c.m.httpClient,
			Dialer:         c.m.dialer,
			Header:         c.opts.Transport.Headers,
			MaxMessageSize: c.m.opts.MaxMessageSize,
			IdleTimeout:    c.m.opts.StreamIdleTimeout,
			Authorize:      c.authorizeRequest(),
			Resume:         resume,
			Counter:        c.m.tel.IOCounter(c.ID()),
			Logger:         c.m.logger.With("server", c.ID()),
			// Closing the server or the Manager does not wait for the
			// answer to an abandoned initialize.
			Life: life,
		}
		if modern {
			// For the list changes go-sdk's listen asks for at most (its
			// list-changed handlers, newClient).
			tr.(*transport.Streamable).EarlyListen = &mcp.NotificationSubscriptions{ToolsListChanged: true, PromptsListChanged: true, ResourcesListChanged: true}
		}
	case TransportSSE:
		if version >= protocolModern {
			return nil, fmt.Errorf("the SSE transport cannot speak protocol version %s", version)
		}
		if version == "" {
			version = protocolLegacy // no 2026-07-28 probe on a 2024-11-05 transport
		}
		tr = &transport.SSE{
			Endpoint:       c.opts.URL,
			HTTPClient:     c.m.httpClient,
			Dialer:         c.m.dialer,
			Header:         c.opts.Transport.Headers,
			MaxMessageSize: c.m.opts.MaxMessageSize,
			Authorize:      c.authorizeRequest(),
			Counter:        c.m.tel.IOCounter(c.ID()),
			Logger:         c.m.logger.With("server", c.ID()),
		}
	case TransportStdio:
		return c.handshakeStdio(ctx, version)
	case TransportInProcess:
		srv, err := c.opts.InProcess(ctx, c.opts.Props)
		if err != nil {
			return nil, fmt.Errorf("building in-process server: %w", err)
		}
		ct, st := mcp.NewInMemoryTransports()
		if s.ss, err = srv.Connect(ctx, st, nil); err != nil {
			return nil, fmt.Errorf("starting in-process server: %w", err)
		}
		tr = ct
	}
	var wrapped mcp.Transport = sessionTransport{tr, c, s}
	if _, ok := tr.(*mcp.StreamableClientTransport); ok {
		wrapped = bareTransport{tr, s} // gosdk.go
	}
	cs, err := c.newClient(s).Connect(ctx, wrapped, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		if s.ss != nil {
			s.ss.Close()
		}
		return nil, err
	}
	s.cs = cs
	if vs, ok := s.raw.(transport.VersionSetter); ok {
		vs.SetNegotiatedVersion(cs.InitializeResult().ProtocolVersion)
	}
	if err := checkPinned(cs, c.opts.Client.ProtocolVersion); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// handshakeStdio starts the command and connects. A server that fails the
// 2026-07-28 probe is restarted for the legacy handshake (some legacy
// servers exit on any first message but initialize); one that fails the
// legacy handshake its era remembered (unpinned) is restarted for the probe.
func (c *server) handshakeStdio(ctx context.Context, version string) (*session, error) {
	if err := c.paceStdio(ctx); err != nil {
		return nil, err
	}
	s, err := c.startStdio(ctx, version)
	if err == nil || c.opts.Client.ProtocolVersion != "" || ctx.Err() != nil {
		return s, err
	}
	next, tried := protocolLegacy, protocolModern // the probe failed
	if version != "" {
		next, tried = "", version // the era remembered failed: probe
	}
	c.m.logger.Info("mcp stdio server failed the handshake; restarting it to try the other protocol era", "server", c.ID(), "tried", tried, "error", err)
	return c.startStdio(ctx, next)
}

func (c *server) startStdio(ctx context.Context, version string) (*session, error) {
	co := c.opts.Command
	cmd := exec.Command(co.Path, co.Args...)
	cmd.Env = stdio.Environ(co.Env)
	cmd.Dir = co.Dir
	t := &stdio.Transport{
		Command:       cmd,
		MaxLineLength: c.m.opts.MaxMessageSize,
		Logger:        c.m.logger.With("server", c.ID()),
		Counter:       c.m.tel.IOCounter(c.ID()),
		Starter:       c.m.starter,
		StderrLimit:   c.stderrLimit(),
	}
	s := &session{transport: TransportStdio}
	cs, err := c.newClient(s).Connect(ctx, sessionTransport{t, c, s}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		if errors.Is(err, stdio.ErrStarterClosed) {
			return nil, ErrClosed
		}
		if exit := t.Exit(); exit != nil {
			// The server went away during the handshake: why, typed
			// (stdio.ExitError), besides what it wrote.
			err = fmt.Errorf("%w; %w", err, exit)
		}
		if out := t.Output(); out != "" {
			err = fmt.Errorf("%w; %s", err, out)
		}
		return nil, err
	}
	if err := checkPinned(cs, c.opts.Client.ProtocolVersion); err != nil {
		cs.Close()
		return nil, err
	}
	s.cs = cs
	return s, nil
}

// resumedIDBase returns the idBase of a resumed session: random in
// [2^32, 2^52), above the ids a process numbering from 1 ever reaches and
// below 2^53, which a JSON number holds exactly in every language.
func resumedIDBase() int64 {
	return 1<<32 + rand.Int64N(1<<52-1<<32)
}

// checkPinned fails a session that did not negotiate a pinned 2026-07-28.
func checkPinned(cs *mcp.ClientSession, pinned string) error {
	got := cs.InitializeResult().ProtocolVersion
	if pinned >= protocolModern && got != pinned {
		return fmt.Errorf("the server does not speak protocol version %s (it offered %s)", pinned, got)
	}
	return nil
}

// newClient returns the go-sdk client for one session, with this
// connection's handlers; buildClient (hooks.go) adds the elicitation,
// sampling and roots capabilities and handlers.
func (c *server) newClient(s *session) *mcp.Client {
	caps := &mcp.ClientCapabilities{}
	if x := c.opts.Client.Capabilities; x != nil {
		caps.Experimental = x.Experimental
		caps.Extensions = x.Extensions
	}
	if c.m.opts.Apps {
		caps.Extensions = withApps(caps.Extensions)
	}
	return c.buildClient(s, &mcp.ClientOptions{
		Logger:       c.m.logger.With("server", c.ID()),
		Capabilities: caps,
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			c.listChanged(s, kindTools)
		},
		PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) {
			c.listChanged(s, kindPrompts)
		},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			c.listChanged(s, kindResources)
		},
		// Progress reaches this handler only on go-sdk's transport; the
		// others route it as they read it (sessionconn.go).
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			c.routeProgress(req.Params)
		},
		LoggingMessageHandler: func(ctx context.Context, req *mcp.LoggingMessageRequest) {
			c.serverLog(ctx, req.Params)
		},
	})
}
