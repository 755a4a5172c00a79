package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/store"
	"go.opentelemetry.io/otel/metric"
)

// Defaults of HostOptions.
const (
	DefaultIdleTimeout = 5 * time.Minute
	DefaultMaxAwake    = 1000
	DefaultTaskWake    = 30 * time.Second
)

// taskWakeTimeout bounds a wake to poll tasks: the restore of their
// servers and their first poll.
const taskWakeTimeout = 30 * time.Second

// HostOptions configures a Host. The zero value, or nil, gives the
// defaults each field documents.
type HostOptions struct {
	// Agent configures every agent the host opens. Nil means agent's
	// defaults; its Logger, when nil, is Logger.
	Agent *Options

	// IdleTimeout is how long an agent stays awake after it was last used
	// and nothing keeps it awake (Agent.Busy). Zero means
	// DefaultIdleTimeout; negative means agents never hibernate for being
	// idle (MaxAwake still applies).
	IdleTimeout time.Duration

	// MaxAwake caps the agents awake at once: waking one more hibernates
	// the least recently used agent that is neither in use nor busy nor
	// kept awake. When every awake agent is, the cap is exceeded rather
	// than a request refused, and the host comes back under it as they
	// free up. Zero means DefaultMaxAwake; negative means no cap.
	MaxAwake int

	// KeepAwake names agents ("class/name") woken by Start and never
	// hibernated, in addition to those with a server added with
	// AddOptions.KeepAwake.
	KeepAwake []string

	// Defaults name agents ("class/name") that always exist, whether or
	// not they have servers: Known lists them first. Nil means none.
	Defaults []string

	// OnOpen, if set, is called with every agent the host opens (first
	// use, or a wake after hibernation), before anyone else uses it: to
	// configure its OAuth callback handling or elicitation handlers, say.
	OnOpen func(*Agent)

	// Directory, if set, decides which of several processes sharing the
	// store owns each agent (see Directory): Use claims an agent before
	// opening it, and fails with ErrOwnedElsewhere when another process
	// owns it; hibernation releases it after closing it. Nil means this
	// process owns every agent it opens (one process per store).
	Directory Directory

	// TaskWake is the least time after which an agent hibernated while
	// tasks it polls still run (see Agent.Tasks) is woken to poll them:
	// it is woken after the tasks' poll interval, or TaskWake if longer,
	// polls each once (storing the outcome of those that ended) and
	// hibernates again unless something else uses it. Zero means
	// DefaultTaskWake; negative means such agents sleep until their next
	// use.
	TaskWake time.Duration

	// Logger receives the host's logs. Nil discards them.
	Logger *slog.Logger
}

// ErrHostClosed is returned by Host.Use after Close.
var ErrHostClosed = errors.New("agent: host closed")

// Host keeps many agents on one store, each awake only while it is used:
// the registry of open agents of a program such as agentmcp serve. Use
// opens an agent on first use (two concurrent uses open it once) and
// holds it awake until released; an agent unused for IdleTimeout, or the
// least recently used one when MaxAwake is reached, is hibernated: closed
// with its sessions kept resumable (Agent.Close), nothing left in memory.
// The next Use wakes it from the store: its servers come back at once,
// their saved sessions resumed without a handshake where the server allows,
// each connecting in the background so that a call waits only for its own
// server.
//
// An agent is never hibernated while it is used (between Use and its
// release), busy (Agent.Busy: a call, a watch, a pending elicitation, an
// OAuth flow in progress) or kept awake (HostOptions.KeepAwake, or a
// server added with AddOptions.KeepAwake).
//
// A Host is safe for concurrent use.
type Host struct {
	st     store.Store
	opts   HostOptions
	agentO Options
	logger *slog.Logger
	now    func() time.Time

	quit chan struct{} // closed by Close: the sweeper stops
	done chan struct{} // closed when the sweeper has stopped

	// mu guards the fields below.
	mu       sync.Mutex
	awake    map[string]*hostEntry    // by "class/name"
	sleeping map[string]chan struct{} // hibernations in flight, closed when done
	stats    HostStats                // counters
	closed   bool
	unclean  bool                   // an agent was not closed in time
	keep     map[string]bool        // HostOptions.KeepAwake
	wakes    map[string]*time.Timer // hibernated agents with running tasks: their next wake

	wakeWG sync.WaitGroup // wakes to poll tasks in progress

	metrics metric.Registration // telemetry.go; nil if none
}

// hostEntry is an agent being opened or awake.
type hostEntry struct {
	key, class, name string
	ready            chan struct{} // closed when a and err are set
	a                *Agent
	err              error
	refs             int          // uses not yet released
	lastUsed         time.Time    // when the last use began or ended
	fence            *store.Fence // the Directory's claim, if any
	lost             bool         // owned by another process now
}

// HostStats counts what a Host did.
type HostStats struct {
	// Awake is how many agents are awake (or being woken) now, and
	// MaxAwakeSeen the most there were at once.
	Awake, MaxAwakeSeen int
	// Wakes counts agents opened, Hibernations agents hibernated.
	Wakes, Hibernations int64
}

// NewHost returns a Host for the agents kept in st. It opens nothing:
// Start wakes the agents that must stay awake. The Host does not close st.
func NewHost(st store.Store, opts *HostOptions) *Host {
	var o HostOptions
	if opts != nil {
		o = *opts
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.MaxAwake == 0 {
		o.MaxAwake = DefaultMaxAwake
	}
	if o.TaskWake == 0 {
		o.TaskWake = DefaultTaskWake
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	var ao Options
	if o.Agent != nil {
		ao = *o.Agent
	}
	if ao.Logger == nil {
		ao.Logger = logger
	}
	h := &Host{
		st:       st,
		opts:     o,
		agentO:   ao,
		logger:   logger,
		now:      time.Now,
		quit:     make(chan struct{}),
		done:     make(chan struct{}),
		awake:    map[string]*hostEntry{},
		sleeping: map[string]chan struct{}{},
		keep:     map[string]bool{},
		wakes:    map[string]*time.Timer{},
	}
	for _, key := range o.KeepAwake {
		h.keep[key] = true
	}
	h.metrics = h.registerMetrics()
	if o.IdleTimeout > 0 {
		go h.sweeper()
	} else {
		close(h.done)
	}
	return h
}

// Start wakes the agents that must stay awake: those of
// HostOptions.KeepAwake and, when the store can list them
// (ListKeepAwake), those with a keep-awake server. Their
// connections are restored in the background. When the store lists the
// agents with tasks still running (store.RunningTaskLister), each is
// woken in the background to poll them and sleeps again, as after a
// hibernation (HostOptions.TaskWake; negative wakes none).
func (h *Host) Start(ctx context.Context) error {
	keys := slices.Clone(h.opts.KeepAwake)
	if lister, ok := h.st.(store.KeepAwakeLister); ok {
		stored, err := lister.ListKeepAwake(ctx)
		if err != nil {
			return fmt.Errorf("agent host: listing keep-awake agents: %w", err)
		}
		keys = append(keys, stored...)
	}
	for _, key := range keys {
		class, name, _ := strings.Cut(key, "/")
		_, release, err := h.Use(ctx, class, name)
		if errors.Is(err, ErrOwnedElsewhere) {
			continue // awake in another process
		}
		if err != nil {
			return fmt.Errorf("agent host: waking %s: %w", key, err)
		}
		release()
	}
	// Agents with tasks still running (a previous process ended while
	// they ran) are woken to poll them, in the background, and sleep again.
	if lister, ok := h.st.(store.RunningTaskLister); ok && h.opts.TaskWake >= 0 {
		running, err := lister.ListRunningTaskAgents(ctx)
		if err != nil {
			return fmt.Errorf("agent host: listing agents with running tasks: %w", err)
		}
		h.mu.Lock()
		for _, key := range running {
			if _, awake := h.awake[key]; awake {
				continue // polling them already
			}
			class, name, _ := strings.Cut(key, "/")
			h.scheduleTaskWakeLocked(class, name, 0)
		}
		h.mu.Unlock()
	}
	return nil
}

// Use returns the agent class/name, awake, opening it when it is asleep
// (its stored servers restored in the background), and holds it awake
// until release is called. Every Use must be released, once; the agent
// must not be used after. Concurrent uses of a sleeping agent open it
// once; a use of an agent being hibernated waits for that to finish and
// wakes it again. Use creates nothing in the store: an agent without
// servers exists only while awake.
func (h *Host) Use(ctx context.Context, class, name string) (a *Agent, release func(), err error) {
	if err := checkName("class", class); err != nil {
		return nil, nil, err
	}
	if err := checkName("name", name); err != nil {
		return nil, nil, err
	}
	key := class + "/" + name
	h.mu.Lock()
	for {
		if h.closed {
			h.mu.Unlock()
			return nil, nil, ErrHostClosed
		}
		if e, ok := h.awake[key]; ok {
			e.refs++
			e.lastUsed = h.now()
			h.mu.Unlock()
			return h.await(ctx, e)
		}
		ch, ok := h.sleeping[key]
		if !ok {
			break
		}
		h.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
		h.mu.Lock()
	}
	e := &hostEntry{key: key, class: class, name: name, ready: make(chan struct{}), refs: 1, lastUsed: h.now()}
	h.awake[key] = e
	h.stats.Wakes++
	victims := h.overCapLocked()
	h.stats.MaxAwakeSeen = max(h.stats.MaxAwakeSeen, len(h.awake))
	h.mu.Unlock()
	h.hibernateAll(victims)
	h.open(ctx, e)
	return h.await(ctx, e)
}

// await waits for e to be open and returns it with its release.
func (h *Host) await(ctx context.Context, e *hostEntry) (*Agent, func(), error) {
	var once sync.Once
	release := func() { once.Do(func() { h.release(e) }) }
	select {
	case <-e.ready:
	case <-ctx.Done():
		release()
		return nil, nil, ctx.Err()
	}
	if e.err != nil {
		release()
		return nil, nil, e.err
	}
	return e.a, release, nil
}

// open opens the agent of e. The caller's ctx bounds only the storage
// reads: the agent outlives the request that woke it.
func (h *Host) open(ctx context.Context, e *hostEntry) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	o := h.agentO
	h.mu.Lock()
	o.now = h.now
	h.mu.Unlock()
	st := h.st
	if dir := h.opts.Directory; dir != nil {
		gate := dir.Gate
		if g, ok := dir.(ClaimGater); ok {
			gate = g.ClaimGate() // before the claim: a lapse in between closes it
		}
		fence, err := dir.Claim(ctx, e.key)
		if err != nil {
			h.failed(e, err)
			return
		}
		e.fence = &fence
		st = &fencedStore{Store: h.st, fence: fence, lost: func() { go h.lose(e) }}
		var mo mcpclient.Options
		if o.Manager != nil {
			mo = *o.Manager
		}
		prev := mo.Gate
		mo.Gate = func() error {
			if err := gate(); err != nil {
				return err
			}
			if prev != nil {
				return prev()
			}
			return nil
		}
		o.Manager = &mo
	}
	a, err := Open(ctx, st, e.class, e.name, &o)
	if err == nil {
		if h.opts.OnOpen != nil {
			h.opts.OnOpen(a)
		}
	} else {
		h.logger.Warn("cannot open agent", "agent", e.key, "error", err)
		err = fmt.Errorf("opening agent %s: %w", e.key, err)
		h.giveBack(context.WithoutCancel(ctx), e)
	}
	if err != nil {
		h.failed(e, err)
		return
	}
	h.mu.Lock()
	e.a = a
	h.mu.Unlock()
	h.logger.Info("agent woke", "agent", e.key, "servers", a.storedCount(), "ms", time.Since(start).Milliseconds())
	close(e.ready)
}

// failed ends the opening of e with err.
func (h *Host) failed(e *hostEntry, err error) {
	h.mu.Lock()
	e.err = err
	if h.awake[e.key] == e {
		delete(h.awake, e.key)
	}
	h.mu.Unlock()
	close(e.ready)
}

// giveBack gives e's ownership back to the Directory, once its agent is
// closed (or was never opened).
func (h *Host) giveBack(ctx context.Context, e *hostEntry) {
	if e.fence == nil {
		return
	}
	if err := h.opts.Directory.Release(ctx, *e.fence); err != nil {
		h.logger.Warn("releasing agent", "agent", e.key, "error", err)
	}
}

// lose drops the agent of e, whose writes the store refused: another
// process owns it now. It is closed (its sessions kept) and not released.
func (h *Host) lose(e *hostEntry) {
	<-e.ready
	h.mu.Lock()
	if h.awake[e.key] != e {
		h.mu.Unlock()
		return
	}
	h.sleepLocked(e)
	h.mu.Unlock()
	h.logger.Warn("agent lost to another process: closing it", "agent", e.key)
	e.fence = nil // not ours to release
	e.lost = true // nor to wake
	h.hibernate(e)
}

// release ends one use of e.
func (h *Host) release(e *hostEntry) {
	h.mu.Lock()
	e.refs--
	e.lastUsed = h.now()
	victims := h.overCapLocked()
	h.mu.Unlock()
	h.hibernateAll(victims)
}

// overCapLocked picks the least recently used agents that may sleep until
// the awake ones are within MaxAwake, and moves them from awake to
// sleeping.
func (h *Host) overCapLocked() []*hostEntry {
	over := len(h.awake) - h.opts.MaxAwake
	if h.opts.MaxAwake < 0 || over <= 0 {
		return nil
	}
	var candidates []*hostEntry
	for _, e := range h.awake {
		if h.maySleepLocked(e) {
			candidates = append(candidates, e)
		}
	}
	slices.SortFunc(candidates, func(x, y *hostEntry) int { return x.lastUsed.Compare(y.lastUsed) })
	victims := candidates[:min(over, len(candidates))]
	for _, e := range victims {
		h.sleepLocked(e)
	}
	return victims
}

// maySleepLocked reports whether e may be hibernated now.
func (h *Host) maySleepLocked(e *hostEntry) bool {
	if e.refs > 0 || h.keep[e.key] {
		return false
	}
	select {
	case <-e.ready:
	default:
		return false // being opened
	}
	return e.err == nil && !e.a.Busy() && !e.a.KeepAwake()
}

// sleepLocked moves e from awake to sleeping.
func (h *Host) sleepLocked(e *hostEntry) {
	delete(h.awake, e.key)
	h.sleeping[e.key] = make(chan struct{})
}

// hibernateAll closes the agents of entries moved to sleeping, in the
// background: a Use of one of them waits for it.
func (h *Host) hibernateAll(entries []*hostEntry) {
	for _, e := range entries {
		go h.hibernate(e)
	}
}

// hibernate closes the agent of e (already moved to sleeping).
func (h *Host) hibernate(e *hostEntry) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tasks, interval := e.a.runningTasks()
	if err := e.a.Close(ctx); err == nil {
		h.logger.Info("agent hibernated", "agent", e.key, "ms", time.Since(start).Milliseconds())
	} else {
		h.logger.Warn("hibernating agent", "agent", e.key, "error", err)
		if ctx.Err() != nil {
			// Not closed in time: its connections may still be up, so the
			// agent is not given back; its ownership lapses with this
			// process.
			e.fence = nil
			h.noteUnclean()
		}
	}
	h.giveBack(ctx, e)
	h.mu.Lock()
	ch := h.sleeping[e.key]
	delete(h.sleeping, e.key)
	h.stats.Hibernations++
	if tasks > 0 && !e.lost {
		h.scheduleTaskWakeLocked(e.class, e.name, max(interval, h.opts.TaskWake))
	}
	h.mu.Unlock()
	close(ch)
}

// scheduleTaskWakeLocked arranges for the agent class/name, asleep while
// tasks it polled still run, to be woken to poll them after d.
func (h *Host) scheduleTaskWakeLocked(class, name string, d time.Duration) {
	if h.closed || h.opts.TaskWake < 0 {
		return
	}
	key := class + "/" + name
	if t := h.wakes[key]; t != nil {
		t.Stop()
	}
	h.wakes[key] = time.AfterFunc(d, func() {
		h.mu.Lock()
		if h.closed {
			h.mu.Unlock()
			return
		}
		delete(h.wakes, class+"/"+name)
		h.wakeWG.Add(1)
		h.mu.Unlock()
		defer h.wakeWG.Done()
		h.wakeForTasks(class, name)
	})
}

// wakeForTasks wakes the agent class/name, hibernated while tasks it
// polls still ran, waits for each to be polled once (the outcome of those
// that ended is stored), and hibernates it again unless it is in use,
// busy or was awake already. If tasks still run, hibernating it schedules
// the next wake; if another process owns it now, that one polls them; a
// wake that fails otherwise (the store unreachable) is tried again after
// TaskWake. An agent closed by Evict is woken so too: the next wake
// claims it again, or finds it owned elsewhere.
func (h *Host) wakeForTasks(class, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), taskWakeTimeout)
	defer cancel()
	h.mu.Lock()
	_, awake := h.awake[class+"/"+name]
	h.mu.Unlock()
	a, release, err := h.Use(ctx, class, name)
	if err != nil {
		if !errors.Is(err, ErrOwnedElsewhere) && !errors.Is(err, ErrHostClosed) {
			h.logger.Warn("waking agent to poll its tasks: trying again later", "agent", class+"/"+name, "error", err)
			h.mu.Lock()
			h.scheduleTaskWakeLocked(class, name, h.opts.TaskWake)
			h.mu.Unlock()
		}
		return
	}
	if err := a.awaitTaskPolls(ctx); err != nil {
		h.logger.Warn("polling the tasks of a woken agent", "agent", class+"/"+name, "error", err)
	}
	release()
	if !awake {
		h.Hibernate(ctx, class, name)
	}
}

// Hibernate hibernates the agent class/name now, unless it is asleep
// already, in use, busy or kept awake: it reports whether it did. It
// returns once the agent is closed.
func (h *Host) Hibernate(ctx context.Context, class, name string) bool {
	key := class + "/" + name
	h.mu.Lock()
	e, ok := h.awake[key]
	if !ok || !h.maySleepLocked(e) {
		h.mu.Unlock()
		return false
	}
	h.sleepLocked(e)
	ch := h.sleeping[key]
	h.mu.Unlock()
	go h.hibernate(e)
	select {
	case <-ch:
	case <-ctx.Done():
	}
	return true
}

// HibernateIdle hibernates, now, every awake agent that is not in use and
// has no call in flight nor watch open, kept awake or not, its pending
// elicitations cancelled and its OAuth flows left to complete where the
// callback lands: what a process that is about to exit does (keep-awake
// agents are then woken elsewhere). It returns once they are closed, and
// reports how many stay awake.
func (h *Host) HibernateIdle(ctx context.Context) int {
	h.mu.Lock()
	var idle []*hostEntry
	for _, e := range h.awake {
		select {
		case <-e.ready:
		default:
			continue // being opened
		}
		if e.refs == 0 && e.err == nil && !e.a.working() {
			idle = append(idle, e)
		}
	}
	for _, e := range idle {
		h.sleepLocked(e)
	}
	left := len(h.awake)
	h.mu.Unlock()
	var wg sync.WaitGroup
	for _, e := range idle {
		wg.Go(func() { h.hibernate(e) })
	}
	wg.Wait()
	return left
}

// sweeper hibernates idle agents until Close.
func (h *Host) sweeper() {
	defer close(h.done)
	t := time.NewTicker(max(h.opts.IdleTimeout/4, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-t.C:
			h.sweep()
		case <-h.quit:
			return
		}
	}
}

// sweep hibernates the agents idle for IdleTimeout.
func (h *Host) sweep() {
	if h.opts.IdleTimeout <= 0 {
		return
	}
	h.mu.Lock()
	now := h.now()
	var idle []*hostEntry
	for _, e := range h.awake {
		if now.Sub(e.lastUsed) >= h.opts.IdleTimeout && h.maySleepLocked(e) {
			idle = append(idle, e)
		}
	}
	for _, e := range idle {
		h.sleepLocked(e)
	}
	h.mu.Unlock()
	h.hibernateAll(idle)
}

// Awake returns the names ("class/name") of the agents awake now, sorted.
func (h *Host) Awake() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]string, 0, len(h.awake))
	for key, e := range h.awake {
		select {
		case <-e.ready:
			if e.err == nil {
				out = append(out, key)
			}
		default:
		}
	}
	slices.Sort(out)
	return out
}

// IsAwake reports whether the agent class/name is awake (or waking).
func (h *Host) IsAwake(class, name string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.awake[class+"/"+name]
	return ok
}

// noteUnclean notes that an agent was not closed in time.
func (h *Host) noteUnclean() {
	h.mu.Lock()
	h.unclean = true
	h.mu.Unlock()
}

// Unclean reports whether an agent's close did not finish in time since
// the host started: its connections may still be up, and its ownership
// was not given back (a process leaving a cluster then lets its ownership
// lapse rather than releasing it).
func (h *Host) Unclean() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.unclean
}

// Stats returns the host's counters.
func (h *Host) Stats() HostStats {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.stats
	s.Awake = len(h.awake)
	return s
}

// WaitForConnections waits until the connections of every awake agent
// have settled (Agent.WaitForConnections), or ctx is done.
func (h *Host) WaitForConnections(ctx context.Context) {
	for _, key := range h.Awake() {
		class, name, _ := strings.Cut(key, "/")
		if !h.IsAwake(class, name) {
			continue
		}
		a, release, err := h.Use(ctx, class, name)
		if err != nil {
			continue
		}
		a.WaitForConnections(ctx)
		release()
	}
}

// HandleOAuthCallback answers r when it is the OAuth callback of an awake
// agent (Agent.IsCallbackRequest: a server added with a custom callback
// path), and reports whether it did. A callback on the default path names
// its agent, which Use wakes; one on a custom path finds its agent awake,
// since an OAuth flow keeps its agent awake while its state is valid.
func (h *Host) HandleOAuthCallback(w http.ResponseWriter, r *http.Request) bool {
	h.mu.Lock()
	var entries []*hostEntry
	for _, e := range h.awake {
		select {
		case <-e.ready:
			if e.err == nil {
				e.refs++
				entries = append(entries, e)
			}
		default:
		}
	}
	h.mu.Unlock()
	handled := false
	for _, e := range entries {
		if !handled && e.a.IsCallbackRequest(r) {
			e.a.HandleOAuthCallback(w, r)
			handled = true
		}
		h.release(e)
	}
	return handled
}

// Evict closes every awake agent (their sessions kept resumable) without
// releasing their ownership: what a process that can no longer trust its
// claims does (its Directory's Gate has closed), so that it holds nothing
// when another process takes them over. Later Uses claim again. It
// returns once they are closed.
func (h *Host) Evict(ctx context.Context) {
	h.mu.Lock()
	entries := make([]*hostEntry, 0, len(h.awake))
	for _, e := range h.awake {
		select {
		case <-e.ready:
			if e.err == nil {
				entries = append(entries, e)
				h.sleepLocked(e)
			}
		default:
		}
	}
	h.mu.Unlock()
	var wg sync.WaitGroup
	for _, e := range entries {
		e.fence = nil // not ours to release any more
		wg.Go(func() { h.hibernate(e) })
	}
	wg.Wait()
}

// Close closes every awake agent (their sessions kept resumable) and
// stops the host; later Uses fail with ErrHostClosed. ctx bounds the wait
// for connections to close. Close is idempotent.
func (h *Host) Close(ctx context.Context) error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	for key, t := range h.wakes {
		t.Stop()
		delete(h.wakes, key)
	}
	entries := make([]*hostEntry, 0, len(h.awake))
	for _, e := range h.awake {
		entries = append(entries, e)
	}
	h.awake = map[string]*hostEntry{}
	var sleeping []chan struct{}
	for _, ch := range h.sleeping {
		sleeping = append(sleeping, ch)
	}
	h.mu.Unlock()
	if h.metrics != nil {
		h.metrics.Unregister() // not under mu: its callback takes mu
	}
	close(h.quit)
	<-h.done

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
			if err := e.a.Close(ctx); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("closing agent %s: %w", e.key, err))
				mu.Unlock()
				if ctx.Err() != nil {
					h.noteUnclean()
					return // not given back: see hibernate
				}
			}
			h.giveBack(ctx, e)
		})
	}
	wg.Wait()
	for _, ch := range sleeping {
		select {
		case <-ch:
		case <-ctx.Done():
		}
	}
	h.wakeWG.Wait() // each ends with its Use refused or its agent closed above
	return errors.Join(errs...)
}
