package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Options configures an Agent. The zero value, or nil, gives the defaults
// each field documents.
type Options struct {
	// Manager configures the agent's MCP client manager. Nil means its
	// defaults; a Logger set here is used when Manager.Logger is nil.
	Manager *mcpclient.Options

	// Logger receives the agent's logs. Nil discards them.
	Logger *slog.Logger

	// TracerProvider and MeterProvider receive the OpenTelemetry spans and
	// metrics of the agent's servers: its Manager's (when Manager sets
	// none) and its OAuth providers'. Nil means the global providers, so
	// that a program that sets up OpenTelemetry gets them with no code
	// (docs/OBSERVABILITY.md).
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider

	// CallbackHost is the default origin of OAuth callback URLs
	// ("https://agents.example.com"), used when AddMCPServer is given none
	// and no request supplies one. Empty means servers added without a host
	// cannot complete OAuth.
	CallbackHost string

	// AgentsPrefix is the first path segment of default callback URLs.
	// Empty means "agents".
	AgentsPrefix string

	// HideIdentity keeps the agent's class and instance name out of
	// callback URLs (the seed's sendIdentityOnConnect: false): AddMCPServer
	// then requires a CallbackPath.
	HideIdentity bool

	// CreateOAuthProvider builds the OAuth provider of each server that has
	// a callback URL, new or restored (pre-registered credentials, say).
	// Nil means oauth.New over the agent's store, with dynamic registration.
	CreateOAuthProvider OAuthProviderFactory

	// ElicitationTimeout, when positive, makes the agent answer its
	// servers' requests for the user's input itself: each is queued as a
	// pending Elicitation (Elicitations, AnswerElicitation, Watch) for an
	// API or a dashboard to answer, and cancelled when no answer comes
	// within ElicitationTimeout or the agent closes. Zero leaves
	// elicitation to the application (ConfigureElicitationHandlers).
	ElicitationTimeout time.Duration

	// NoStoredCatalogs turns off keeping each server's last tools,
	// prompts and resources lists with the agent (a store.CatalogStore's
	// catalogs). By default they are stored whenever they change, and an
	// agent woken or restored offers them at once, marked stale, until
	// each server lists them again (see WaitCatalogs).
	NoStoredCatalogs bool

	// PolicyHook, when set, makes dynamic decisions on tool calls after
	// the agent's stored policy (see PolicyHook). Nil means the stored
	// policy alone.
	PolicyHook PolicyHook

	// ApprovalLifetime is how long a call the policy asks about waits for
	// a person's answer before its approval expires. Zero means
	// DefaultApprovalLifetime (24 hours).
	ApprovalLifetime time.Duration

	// ApprovalRetention and MaxApprovals bound the approvals kept once
	// they ended (denied, expired, done): those older than
	// ApprovalRetention on the agent's clock, and those past the
	// MaxApprovals most recent, are deleted. Zero means
	// DefaultApprovalRetention (30 days) and DefaultMaxApprovals (1000).
	ApprovalRetention time.Duration
	MaxApprovals      int

	// Dormant opens the agent without restoring its connections: its
	// servers are registered, shown as stored (not-connected, or
	// authenticating), and connect only when Reconnect (or AddMCPServer)
	// asks. For programs that only read or edit the stored servers, such
	// as "agentmcp ls --db".
	Dormant bool

	// NoAudit turns off the agent's audit log (audit.go). By default,
	// when the store keeps one (store.AuditStore), every call, decision,
	// pin decision and server change is recorded.
	NoAudit bool
	// AuditKeep is the most records the audit log keeps for the agent,
	// the oldest deleted first; zero means DefaultAuditKeep (100,000),
	// negative no bound.
	AuditKeep int
	// AuditMaxAge is how long a record is kept, on the agent's clock;
	// zero means DefaultAuditMaxAge (30 days), negative no bound.
	AuditMaxAge time.Duration
	// AuditWindow is how long records are gathered before they are
	// written in one batch: what a process killed without Close (kill
	// -9) may lose. Zero means DefaultAuditWindow (100ms).
	AuditWindow time.Duration

	// now is the agent's clock (a Host's); nil means time.Now.
	now func() time.Time
}

// Agent is one named agent instance and its MCP servers: the seed's Agent
// with addMcpServer, removeMcpServer and getMcpServers. Its servers are
// kept in a store.Store, so that an Agent opened again after a restart comes
// back with them.
//
// An Agent is safe for concurrent use.
type Agent struct {
	class, name, ns string
	st              store.Store
	m               *mcpclient.Manager
	opts            Options
	logger          *slog.Logger

	// add serialises the storage decisions of AddMCPServer and
	// RemoveMCPServer; the network work happens outside it.
	add sync.Mutex

	// mu guards the fields below.
	mu       sync.Mutex
	rows     map[string]store.Server // the stored rows, by id
	states   stateLog                // when each server's state last changed (story.go)
	order    []string                // ids in storage order
	inflight map[string]*addOp       // first connections of added servers
	closed   bool
	// restoring holds the servers restored by Open whose first
	// connection attempt has not settled yet, closed when it has.
	restoring map[string]chan struct{}
	// dormant holds the servers restored by a Dormant Open that nothing
	// asked to connect since: they show their stored state.
	dormant map[string]bool

	updates     *updates
	pending     elicitations
	attachments attachments  // parts that live as long as the agent (attach.go)
	tracked     trackedCalls // calls whose elicitations a caller follows
	writes      writes       // database writes, off the event path

	// testHookAuthURL, when set by a test, runs in an authorisation URL's
	// queued write between reading the Manager's URL and writing it.
	// Guarded by writes.mu.
	testHookAuthURL func(id string)
	quit            chan struct{} // closed by Close
	oauth           oauthState
	// auths are the AuthProviders given to the Manager, by server id.
	auths sync.Map // string -> *serverAuth

	clock    func() time.Time
	exposure atomic.Pointer[Exposure] // the exposure rules (exposure.go), never nil once open
	// exposureMu serialises SetExposure's writes (held across the store
	// write, so that the rules in memory are the last ones stored).
	exposureMu sync.Mutex
	pol        agentPolicy    // the tool policy (policy.go)
	apr        agentApprovals // the approvals (approvals.go)
	pins       agentPins      // the pinned tool definitions (pins.go)
	audit      auditLog       // the audit log's recorder (audit.go)
	busyN      atomic.Int64   // calls, adds and reconnections in flight
	tasks      agentTasks     // its tasks (tasks.go)
	cats       catalogState   // its servers' stored catalogs (catalogs.go)
	authUntil  atomic.Int64   // unix nanoseconds until which an OAuth flow may complete
}

// addOp is an AddMCPServer connection in flight, shared by concurrent adds
// of the same server.
type addOp struct {
	done chan struct{}
	res  AddResult
	err  error
}

// Open opens the agent named name of class class, with its servers from st,
// and restores their connections in the background (WaitForConnections
// waits for them). Servers that were waiting for OAuth stay authenticating,
// without network I/O. Many agents may share one store: each sees only its
// own servers.
func Open(ctx context.Context, st store.Store, class, name string, opts *Options) (*Agent, error) {
	if err := checkName("class", class); err != nil {
		return nil, err
	}
	if err := checkName("name", name); err != nil {
		return nil, err
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.AgentsPrefix == "" {
		o.AgentsPrefix = "agents"
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	var mo mcpclient.Options
	if o.Manager != nil {
		mo = *o.Manager
	}
	if mo.Logger == nil {
		mo.Logger = logger
	}
	if mo.TracerProvider == nil {
		mo.TracerProvider = o.TracerProvider
	}
	if mo.MeterProvider == nil {
		mo.MeterProvider = o.MeterProvider
	}
	a := &Agent{
		class:     class,
		name:      name,
		ns:        class + "/" + name,
		st:        st,
		opts:      o,
		logger:    logger.With("agent", class+"/"+name),
		rows:      map[string]store.Server{},
		inflight:  map[string]*addOp{},
		restoring: map[string]chan struct{}{},
		dormant:   map[string]bool{},
		quit:      make(chan struct{}),
		clock:     time.Now,
	}
	if o.now != nil {
		a.clock = o.now
	}
	rows, err := st.ListServers(ctx, a.ns)
	if err != nil {
		return nil, fmt.Errorf("open agent %s: %w", a.ns, err)
	}
	for _, row := range rows {
		a.rows[row.ID] = row
		a.order = append(a.order, row.ID)
	}
	// The stored catalogs are read and decoded while the rest is (they
	// are most of a wake's work until its first AITools); they are in
	// before a server is restored.
	loaded := make(chan map[string]*mcpclient.Catalog, 1)
	go func() { loaded <- a.loadCatalogs(ctx) }() // catalogs.go
	a.pins.init(o)
	err = a.loadExposure(ctx)
	if err == nil {
		err = a.loadPolicy(ctx)
	}
	if err == nil {
		err = a.loadPins(ctx)
	}
	if err != nil {
		<-loaded
		return nil, fmt.Errorf("open agent %s: %w", a.ns, err)
	}
	a.apr.init(o)
	a.initAudit(o) // audit.go: its flusher runs until Close
	a.m = mcpclient.New(&mo)
	a.updates = newUpdates(a)
	if o.ElicitationTimeout > 0 {
		a.pending.init(o.ElicitationTimeout, a.quit, func() {
			a.updates.elicitationsChanged()
			a.tracked.poke()
		})
		a.pending.callOf = a.tracked.callOf
		a.m.ConfigureElicitationHandlers(a.pending.handler())
	}
	// Persist what the connections learn (sessions to resume) as they go,
	// and the elicitation modes they advertise (elicitation.go).
	a.m.Subscribe(a.persist)
	a.m.Subscribe(a.stampElicitation)
	a.m.Subscribe(a.settled)
	a.m.Subscribe(a.tell)        // story.go
	a.m.Subscribe(a.noteCatalog) // catalogs.go
	a.m.Subscribe(a.notePins)    // pins.go
	cats := <-loaded
	for _, row := range rows {
		a.restore(ctx, row, cats[row.ID])
	}
	a.tasks.ctx, a.tasks.cancel = context.WithCancel(context.Background())
	// A dormant agent (agentmcp ls --db, tasks --db) connects nothing:
	// its servers' tasks are left to the agent that will, rather than
	// failed for want of a connection.
	if !a.opts.Dormant {
		if err := a.resumeTasks(ctx); err != nil {
			a.logger.Warn("cannot resume the stored tasks", "error", err)
		}
		if err := a.resumeApprovals(ctx); err != nil { // approvalrun.go
			a.logger.Warn("cannot resume the stored approvals", "error", err)
		}
	}
	return a, nil
}

// settled notes the end of the first connection attempt of a restored
// server: ready, failed, waiting for authorisation, closed, or any state
// with an error (an attempt that failed, to be retried; a discovery that
// failed). A resumed session the server rejected is not an end: its one
// fresh handshake follows at once (connecting, with the session's error),
// and WaitRestored waits for that. It is a Manager listener.
func (a *Agent) settled(ev mcpclient.Event) {
	if ev.Kind != mcpclient.EventStateChanged && ev.Kind != mcpclient.EventRemoved {
		return
	}
	switch ev.State {
	case mcpclient.StateReady, mcpclient.StateFailed, mcpclient.StateAuthenticating, mcpclient.StateNotConnected:
	case mcpclient.StateConnecting:
		renewing := ev.Err == nil || errors.Is(ev.Err, mcpclient.ErrSessionExpired) || errors.Is(ev.Err, mcp.ErrSessionMissing)
		if renewing && ev.Kind != mcpclient.EventRemoved {
			return
		}
	default:
		if ev.Err == nil && ev.Kind != mcpclient.EventRemoved {
			return
		}
	}
	a.mu.Lock()
	if ch, ok := a.restoring[ev.ServerID]; ok {
		close(ch)
		delete(a.restoring, ev.ServerID)
	}
	a.mu.Unlock()
}

// WaitRestored waits until the servers ids (all when none is given) that
// Open restored have finished their first connection attempt: ready (their
// catalogs known), failed, or waiting for authorisation. It returns at once
// for the others, and when ctx is done. A request that lists catalogs
// right after a wake waits for it, rather than see them empty.
func (a *Agent) WaitRestored(ctx context.Context, ids ...string) {
	a.mu.Lock()
	var chans []chan struct{}
	if len(ids) == 0 {
		for _, ch := range a.restoring {
			chans = append(chans, ch)
		}
	}
	for _, id := range ids {
		if ch, ok := a.restoring[id]; ok {
			chans = append(chans, ch)
		}
	}
	a.mu.Unlock()
	for _, ch := range chans {
		select {
		case <-ch:
		case <-ctx.Done():
			return
		}
	}
}

// woken notes that server id was asked to connect: it is no longer
// dormant.
func (a *Agent) woken(id string) {
	a.mu.Lock()
	delete(a.dormant, id)
	a.mu.Unlock()
}

// checkName refuses names that would make namespaces or paths ambiguous.
func checkName(what, s string) error {
	if s == "" || strings.ContainsAny(s, "/?#") || strings.TrimSpace(s) != s {
		return fmt.Errorf("agent %s %q: must be non-empty, without '/', '?', '#' or surrounding spaces", what, s)
	}
	return nil
}

// restore registers a stored server, with its stored catalog if any, and
// starts its connection.
func (a *Agent) restore(ctx context.Context, row store.Server, cat *mcpclient.Catalog) {
	opts, err := a.serverOptions(row)
	opts.Catalog = cat
	if err == nil {
		_, err = a.m.RegisterServer(ctx, row.ID, opts)
	}
	if err != nil {
		// A row that cannot be registered (a URL the guard now refuses,
		// say) stays stored and is shown as failed-to-restore in the log.
		a.logger.Warn("cannot restore mcp server", "server", row.ID, "error", err)
		return
	}
	switch {
	case row.AuthURL != "":
	case a.opts.Dormant:
		a.mu.Lock()
		a.dormant[row.ID] = true
		a.mu.Unlock()
	default:
		a.mu.Lock()
		a.restoring[row.ID] = make(chan struct{})
		a.mu.Unlock()
		a.m.EstablishConnection(row.ID)
	}
}

// serverOptions turns a stored row into Manager options.
func (a *Agent) serverOptions(row store.Server) (mcpclient.ServerOptions, error) {
	o := row.Options.Resumable()
	so := mcpclient.ServerOptions{
		Name:           row.Name,
		URL:            row.URL,
		CallbackURL:    row.CallbackURL,
		PendingAuthURL: row.AuthURL,
		Transport:      mcpclient.TransportOptions{Type: mcpclient.TransportType(o.TransportType)},
		Client:         mcpclient.ClientOptions{ProtocolVersion: o.PinnedProtocolVersion},
	}
	if c := o.Command; c != nil {
		so.Command = &mcpclient.CommandOptions{Path: c.Path, Args: slices.Clone(c.Args), Dir: c.Dir}
		for _, k := range slices.Sorted(maps.Keys(c.Env)) {
			so.Command.Env = append(so.Command.Env, k+"="+c.Env[k])
		}
	}
	if len(o.Headers) > 0 {
		so.Transport.Headers = http.Header{}
		for k, v := range o.Headers {
			so.Transport.Headers.Set(k, v)
		}
	}
	if r := o.Retry; r != nil {
		so.Retry = &mcpclient.RetryOptions{MaxAttempts: r.MaxAttempts,
			BaseDelay:          time.Duration(r.BaseDelayMS) * time.Millisecond,
			MaxDelay:           time.Duration(r.MaxDelayMS) * time.Millisecond,
			BackgroundMaxDelay: time.Duration(r.BackgroundMaxDelayMS) * time.Millisecond,
			DisableBackground:  r.DisableBackground}
	}
	if o.ProtocolVersion != "" && len(o.DiscoverResult) > 0 {
		var res mcp.InitializeResult
		if json.Unmarshal(o.DiscoverResult, &res) == nil {
			so.Resume = &mcpclient.Resume{ProtocolVersion: o.ProtocolVersion, SessionID: o.SessionID, Result: &res}
		}
	}
	if row.CallbackURL != "" {
		sa, _ := a.auths.LoadOrStore(row.ID, a.newServerAuth(row.ID))
		so.Auth = sa.(*serverAuth)
	}
	if len(o.Capabilities) > 0 {
		var caps mcp.ClientCapabilities
		if err := json.Unmarshal(o.Capabilities, &caps); err != nil {
			return so, fmt.Errorf("stored capabilities: %w", err)
		}
		so.Client.Capabilities = &caps
	}
	return so, nil
}

// persist writes what a connection change means for the stored row: a
// session to resume after a restart, or none.
func (a *Agent) persist(ev mcpclient.Event) {
	a.mu.Lock()
	closing := a.closed
	a.mu.Unlock()
	if ev.Kind != mcpclient.EventStateChanged || closing {
		// Closing the agent closes its connections, but their sessions
		// stay resumable: nothing to save.
		return
	}
	var resume *mcpclient.Resume
	switch ev.State {
	case mcpclient.StateAuthenticating:
		// Keep the pending authorisation, so a restart waits for it.
		a.queueAuthURL(ev.ServerID)
		return
	case mcpclient.StateReady, mcpclient.StateConnected:
		info, ok := a.m.Server(ev.ServerID)
		if !ok {
			return
		}
		resume = info.Resume
	case mcpclient.StateNotConnected:
		// Closed on purpose: the session is over.
	default:
		return
	}
	a.writes.put("session:"+ev.ServerID, func(ctx context.Context) { a.saveSession(ctx, ev.ServerID, resume) })
}

// saveSession stores the session of a server to resume, or none.
func (a *Agent) saveSession(ctx context.Context, id string, resume *mcpclient.Resume) {
	a.updateRow(ctx, id, func(row *store.Server) bool {
		o := &row.Options
		if resume == nil {
			changed := o.SessionID != "" || len(o.DiscoverResult) > 0
			o.SessionID, o.ProtocolVersion, o.DiscoverResult = "", "", nil
			return changed
		}
		result, err := json.Marshal(resume.Result)
		if err != nil || (o.SessionID == resume.SessionID && o.ProtocolVersion == resume.ProtocolVersion && string(o.DiscoverResult) == string(result)) {
			return false
		}
		o.SessionID, o.ProtocolVersion, o.DiscoverResult = resume.SessionID, resume.ProtocolVersion, result
		return true
	})
}

// updateRow changes a stored row with fn (which reports whether it changed
// anything) and keeps the in-memory copy in step.
func (a *Agent) updateRow(ctx context.Context, id string, fn func(*store.Server) bool) {
	a.mu.Lock()
	row, ok := a.rows[id]
	a.mu.Unlock()
	if !ok || !fn(&row) {
		// Unknown, or nothing to change as far as the in-memory copy (kept
		// in step with every write) tells: no transaction. fn only assigns
		// fields, so trying it on a copy leaves the copy's sharers alone.
		return
	}
	var updated store.Server
	err := a.st.UpdateServer(ctx, a.ns, id, func(row *store.Server) error {
		if !fn(row) {
			return errUnchanged
		}
		updated = *row
		return nil
	})
	switch {
	case errors.Is(err, errUnchanged):
	case errors.Is(err, store.ErrNotFound):
		// Removed meanwhile: nothing to save.
	case err != nil:
		a.logger.Warn("cannot save mcp server state", "server", id, "error", err)
	default:
		a.mu.Lock()
		if _, ok := a.rows[id]; ok {
			a.rows[id] = updated
		}
		a.mu.Unlock()
	}
}

var errUnchanged = errors.New("unchanged")

func (a *Agent) newServerAuth(id string) *serverAuth {
	sa := &serverAuth{a: a}
	sa.id.Store(&id)
	return sa
}

// Manager returns the agent's MCP client manager (the seed's this.mcp), for
// fine-grained control: calls, catalogs, events.
func (a *Agent) Manager() *mcpclient.Manager { return a.m }

// Namespace returns "class/name", the agent's namespace in the store.
func (a *Agent) Namespace() string { return a.ns }

// WaitForConnections waits until the connections being restored or
// established have settled, and what they changed is stored, or ctx is
// done.
func (a *Agent) WaitForConnections(ctx context.Context) {
	a.m.WaitForConnections(ctx)
	a.writes.flush(ctx)
}

// Close closes the agent's connections, keeping the servers' sessions alive
// so that the agent resumes them when it is opened again on the same store.
// A program that will not open it again (its store ends with it) should set
// Options.Manager.EndSessionsOnClose, and Close then ends the sessions. It
// does not close the store. Close is idempotent.
func (a *Agent) Close(ctx context.Context) error {
	a.mu.Lock()
	already := a.closed
	a.closed = true
	a.mu.Unlock()
	if already {
		return nil
	}
	// The attachments first (the MCP endpoint: its clients' sessions end,
	// the agent's input handlers are given back), while the connections
	// they use are up.
	aerr := a.closeAttachments(ctx)
	close(a.quit) // pending elicitations are answered cancel
	// Under tasks.mu: no repoll is added after this (tasks.go).
	a.tasks.mu.Lock()
	a.tasks.cancel()
	a.tasks.mu.Unlock()
	a.apr.cancel()
	// The writes queued so far first: some read the Manager (a server's
	// catalog, catalogs.go), which answers nothing once closed.
	a.writes.flush(ctx)
	err := a.m.Close(ctx)
	a.tasks.wg.Wait() // resumed polls end with the Manager
	a.apr.wg.Wait()   // approved calls running end with it too
	a.updates.stop()
	a.writes.flush(ctx)
	a.audit.close(ctx) // the records so far are written
	return errors.Join(err, aerr)
}
