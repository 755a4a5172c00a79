// Package cluster lets several agentmcp processes (replicas) share one
// Postgres database, each agent owned by exactly one of them at a time.
//
// A Replica is one process's membership: a row in agentmcp_replicas that
// it renews every Options.Interval, with an expiry set by the database's
// clock (Options.TTL). Its ownership of an agent is a lease row naming it,
// valid exactly as long as its replica row is, with an epoch (a fencing
// token) that every write of the agent's servers carries: a replica that
// lost an agent cannot change it (store.ErrFenced). A Replica is an
// agent.Directory: an agent.Host with one claims an agent before it opens
// it and releases it after it closes it.
//
// Trust: after each renewal, the replica trusts its leases until the start
// of that renewal plus TTL minus Options.Margin, on its own monotonic
// clock. Past that, before any other replica may take its agents over,
// its Gate closes (every outbound request of its agents is stopped unsent)
// and Options.OnUntrusted closes its agents (agent.Host.Evict). A renewal
// that succeeds again restores the trust, after giving back every lease
// the replica still held; a replica whose row expired joins again under a
// new id.
//
// Hints: a replica listens to the database's notifications (LISTEN) of
// leases given back, so that one waiting for an agent (Watch) takes it at
// once rather than at its next look. Hints are only hints: a waiter also
// looks again by itself, and nothing depends on them for safety.
//
// Policy (policy.go): Rehome wakes, on some replica, the keep-awake agents
// nobody holds; Follow takes a request from owner to owner, AwaitOwner
// deciding how long it waits for an owner it cannot reach and whom to try
// next; WatchLease ends what a replica
// relays to an owner whose lease lapsed or moved; Elsewhere names the
// replica a draining one sends new agents to. Package server forwards the
// requests these decide on, each signed with the cluster key (sign.go:
// SignRequest, Signer; good once, within Skew of the receiver's clock).
package cluster

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/cluster/lease"
	"github.com/agentmcp/agentmcp/store"
)

// Defaults of Options.
const (
	DefaultTTL      = 8 * time.Second
	DefaultInterval = 2 * time.Second
	DefaultMargin   = 2 * time.Second
)

// Options configures a Replica. The zero value, or nil, gives the defaults
// each field documents.
type Options struct {
	// URL is where the other replicas reach this one's cluster listener
	// ("http://10.0.0.5:8788"), stored with its row. Required.
	URL string
	// Version names the build, stored with the row for mixed-version
	// deploys. Empty means "dev".
	Version string

	// TTL is how long the replica's row (and with it its leases) stays
	// valid after a renewal, by the database's clock; Interval how often
	// it is renewed; Margin how long before the expiry, by the replica's
	// own clock, it stops trusting its leases. Zero means DefaultTTL,
	// DefaultInterval and DefaultMargin. TTL must be more than Interval
	// plus Margin.
	TTL, Interval, Margin time.Duration

	// Awake, if set, reports the replica's load (awake agents) with each
	// renewal.
	Awake func() int

	// OnUntrusted, if set, is called (on its own goroutine) when the
	// replica stops trusting its leases: it must close every agent the
	// replica holds, without releasing them (agent.Host.Evict).
	OnUntrusted func()

	// Logger receives the replica's logs. Nil discards them.
	Logger *slog.Logger

	now func() time.Time // the local clock; nil means time.Now
}

// LeaseStore is what a Replica needs of the database its cluster shares:
// the replicas' rows, the agents' leases and the hints about them. Every
// expiry is set and judged by the database's clock, never by a replica's;
// store/postgres implements it (its doc gives each method's guarantee).
// Its methods are safe for concurrent use.
type LeaseStore interface {
	// RegisterReplica adds the replica id, live until ttl from now, in
	// state lease.ReplicaLive; an id that has a row, live or expired,
	// fails (wrapping store.ErrConflict).
	RegisterReplica(ctx context.Context, id, clusterURL, version string, ttl time.Duration) error
	// Heartbeat renews the live replica id until ttl from now, with its
	// load; false means its row had expired or is gone: it lost every
	// lease and must register again under a new id.
	Heartbeat(ctx context.Context, id string, ttl time.Duration, awake int) (bool, error)
	// SetReplicaState sets the state of the replica id.
	SetReplicaState(ctx context.Context, id, state string) error
	// DeleteReplica deletes the row of the replica id; none is no error.
	DeleteReplica(ctx context.Context, id string) error
	// LiveReplicas returns the live replicas, those in state
	// lease.ReplicaLive first, each group least loaded first.
	LiveReplicas(ctx context.Context) ([]lease.Replica, error)

	// Claim makes the live replica the owner of the agent ns under a new
	// epoch, unless another live replica owns it (false).
	Claim(ctx context.Context, ns, replica string) (store.Fence, bool, error)
	// Release gives back the lease f names, if it is still the current one.
	Release(ctx context.Context, f store.Fence) error
	// ReleaseAll gives back every lease of the replica.
	ReleaseAll(ctx context.Context, replica string) error
	// Resolve returns the lease of the agent ns.
	Resolve(ctx context.Context, ns string) (lease.Owner, error)
	// UnownedKeepAwake returns up to limit agents with a keep-awake server
	// that no live replica owns, and those whose owner died while a task
	// of theirs ran.
	UnownedKeepAwake(ctx context.Context, limit int) ([]string, error)

	// Listen calls fn with the payload of each hint, in order: "" once
	// first, when it listens (hints before were missed), then each
	// namespace whose lease was given back. It returns nil when ctx ends,
	// or the error that ended its connection (call it again to resume).
	Listen(ctx context.Context, fn func(payload string)) error
}

// ErrUntrusted is the Gate's error while the replica does not trust its
// leases.
var ErrUntrusted = errors.New("cluster: this replica's leases are not trusted (the database could not be reached in time)")

// Replica is one process's membership of a cluster. It implements
// agent.Directory.
type Replica struct {
	st     LeaseStore
	opts   Options
	logger *slog.Logger
	quit   chan struct{}
	done   chan struct{}

	stopListen context.CancelFunc
	listenDone chan struct{}
	listening  chan struct{} // closed once hints are first heard

	// hmu guards watchers.
	hmu      sync.Mutex
	watchers map[string]*watcher // by namespace

	// mu guards the fields below.
	mu           sync.Mutex
	id           string
	trustedUntil time.Time // on the local clock
	untrusted    bool      // OnUntrusted was called and trust not restored
	lapses       uint64    // how many times trust lapsed
	left         bool
}

var (
	_ agent.Directory  = (*Replica)(nil)
	_ agent.ClaimGater = (*Replica)(nil)
)

// Join registers a new replica on st (a *postgres.Store) and starts
// renewing it. Leave ends it.
func Join(ctx context.Context, st LeaseStore, opts *Options) (*Replica, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.URL == "" {
		return nil, errors.New("cluster: Options.URL is required (where other replicas reach this one)")
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	if o.TTL == 0 {
		o.TTL = DefaultTTL
	}
	if o.Interval == 0 {
		o.Interval = DefaultInterval
	}
	if o.Margin == 0 {
		o.Margin = DefaultMargin
	}
	if o.TTL <= o.Interval+o.Margin {
		return nil, fmt.Errorf("cluster: TTL %v must be more than Interval %v plus Margin %v", o.TTL, o.Interval, o.Margin)
	}
	if o.now == nil {
		o.now = time.Now
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	r := &Replica{st: st, opts: o, logger: logger, quit: make(chan struct{}), done: make(chan struct{}),
		listenDone: make(chan struct{}), listening: make(chan struct{}), watchers: map[string]*watcher{}}
	if err := r.register(ctx); err != nil {
		return nil, err
	}
	lctx, stop := context.WithCancel(context.Background())
	r.stopListen = stop
	go r.listen(lctx)
	go r.run()
	return r, nil
}

// watcher is the waiters for hints about one agent.
type watcher struct {
	ch   chan struct{} // closed by the next hint
	refs int
}

// Watch returns a channel closed when a hint about the agent ns arrives
// (its lease was given back: Release, a drain, a replica leaving), or when
// hints may have been missed (the listening connection was lost and is
// back). Call stop when done waiting. A hint can come before the state it
// announces is visible to a read that was already under way: after one,
// look again (Resolve, Claim); without one, look again anyway now and then.
func (r *Replica) Watch(ns string) (hint <-chan struct{}, stop func()) {
	r.hmu.Lock()
	defer r.hmu.Unlock()
	w := r.watchers[ns]
	if w == nil {
		w = &watcher{ch: make(chan struct{})}
		r.watchers[ns] = w
	}
	w.refs++
	var once sync.Once
	return w.ch, func() {
		once.Do(func() {
			r.hmu.Lock()
			defer r.hmu.Unlock()
			if w.refs--; w.refs == 0 && r.watchers[ns] == w {
				delete(r.watchers, ns)
			}
		})
	}
}

// hint wakes the watchers of the agent named by payload, or every watcher
// for "" (hints may have been missed).
func (r *Replica) hint(payload string) {
	r.hmu.Lock()
	defer r.hmu.Unlock()
	for ns, w := range r.watchers {
		if payload == "" || ns == payload {
			close(w.ch)
			delete(r.watchers, ns)
		}
	}
}

// listen receives the database's hints until ctx ends, listening again
// (every Interval/4) after the connection is lost.
func (r *Replica) listen(ctx context.Context) {
	defer close(r.listenDone)
	failing := false
	var once sync.Once
	for {
		err := r.st.Listen(ctx, func(payload string) {
			failing = false
			r.hint(payload)
			once.Do(func() { close(r.listening) })
		})
		if ctx.Err() != nil {
			return
		}
		if !failing {
			// Once per outage: the renewals say the rest.
			r.logger.Warn("cluster: listening for hints failed; listening again", "error", err)
			failing = true
		}
		r.hint("")
		t := time.NewTimer(max(r.opts.Interval/4, time.Millisecond))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return
		}
	}
}

// newID returns a fresh replica id: one per incarnation, so that a
// restarted process never inherits its predecessor's leases.
func newID() string { return "r-" + rand.Text()[:16] }

// register writes a new replica row and trusts it.
func (r *Replica) register(ctx context.Context) error {
	id := newID()
	start := r.opts.now()
	if err := r.st.RegisterReplica(ctx, id, r.opts.URL, r.opts.Version, r.opts.TTL); err != nil {
		return fmt.Errorf("cluster: registering replica: %w", err)
	}
	r.mu.Lock()
	r.id = id
	r.trustedUntil = start.Add(r.opts.TTL - r.opts.Margin)
	r.untrusted = false
	r.mu.Unlock()
	r.logger.Info("cluster: joined", "replica", id)
	return nil
}

// ID returns the replica's current id.
func (r *Replica) ID() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.id
}

// run renews the replica until Leave: every Interval, and every
// Interval/4 after a failed renewal; it checks the trust deadline as often.
func (r *Replica) run() {
	defer close(r.done)
	tick := time.NewTicker(max(r.opts.Interval/4, time.Millisecond))
	defer tick.Stop()
	next := r.opts.now().Add(r.opts.Interval)
	for {
		select {
		case <-r.quit:
			return
		case <-tick.C:
		}
		if !r.opts.now().Before(next) {
			if r.beat() {
				next = r.opts.now().Add(r.opts.Interval)
			} else {
				next = r.opts.now().Add(r.opts.Interval / 4)
			}
		}
		r.checkTrust()
	}
}

// beat renews the replica's row once, and reports whether it did.
func (r *Replica) beat() bool {
	start := r.opts.now()
	r.mu.Lock()
	id, deadline, untrusted := r.id, r.trustedUntil, r.untrusted
	r.mu.Unlock()
	// A renewal never outlasts the trust it could keep.
	ctx, cancel := context.WithTimeout(context.Background(), max(min(r.opts.Interval, deadline.Sub(start)), r.opts.Interval/4))
	defer cancel()
	awake := 0
	if r.opts.Awake != nil {
		awake = r.opts.Awake()
	}
	ok, err := r.st.Heartbeat(ctx, id, r.opts.TTL, awake)
	switch {
	case err != nil:
		r.logger.Warn("cluster: renewing the replica failed", "replica", id, "error", err)
		return false
	case !ok:
		// The row expired: every lease of this id is gone. Stop acting for
		// them, then join again as a new replica.
		r.logger.Warn("cluster: the replica's row expired; joining again", "replica", id)
		r.distrust()
		if err := r.register(ctx); err != nil {
			r.logger.Warn("cluster: joining again failed", "error", err)
			return false
		}
		return true
	}
	if untrusted {
		// Trusted again before the row expired: the agents were closed
		// without releasing them; give the leases back first, so that they
		// can be claimed again (here or elsewhere).
		if err := r.st.ReleaseAll(ctx, id); err != nil {
			r.logger.Warn("cluster: releasing the leases of a distrusted replica failed", "replica", id, "error", err)
			return false
		}
	}
	r.mu.Lock()
	r.trustedUntil = start.Add(r.opts.TTL - r.opts.Margin)
	r.untrusted = false
	r.mu.Unlock()
	return true
}

// checkTrust distrusts the replica once its trust deadline has passed.
func (r *Replica) checkTrust() {
	r.mu.Lock()
	past := !r.opts.now().Before(r.trustedUntil)
	r.mu.Unlock()
	if past {
		r.distrust()
	}
}

// distrust closes the gate and calls OnUntrusted, once per loss of trust.
func (r *Replica) distrust() {
	r.mu.Lock()
	if r.untrusted {
		r.mu.Unlock()
		return
	}
	r.untrusted = true
	r.lapses++
	r.trustedUntil = time.Time{}
	id := r.id
	r.mu.Unlock()
	r.logger.Warn("cluster: leases no longer trusted: closing every agent", "replica", id)
	if r.opts.OnUntrusted != nil {
		go r.opts.OnUntrusted()
	}
}

// Gate implements agent.Directory: ErrUntrusted once the trust deadline
// has passed.
func (r *Replica) Gate() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.gateLocked()
}

// gateLocked is Gate with r.mu held.
func (r *Replica) gateLocked() error {
	if r.untrusted || r.left || !r.opts.now().Before(r.trustedUntil) {
		return ErrUntrusted
	}
	return nil
}

// ClaimGate implements agent.ClaimGater: the gate of an agent claimed
// after the call. It is Gate while the replica's trust lasts, and stays
// closed once the trust has lapsed, whether or not it returns: the agents
// of the lapsed period are being closed (OnUntrusted), their leases given
// back or expired, and may already run elsewhere.
func (r *Replica) ClaimGate() func() error {
	r.mu.Lock()
	lapses := r.lapses
	r.mu.Unlock()
	return func() error {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.lapses != lapses {
			return ErrUntrusted
		}
		return r.gateLocked()
	}
}

// Claim implements agent.Directory.
func (r *Replica) Claim(ctx context.Context, ns string) (store.Fence, error) {
	if err := r.Gate(); err != nil {
		return store.Fence{}, err
	}
	id := r.ID()
	f, ok, err := r.st.Claim(ctx, ns, id)
	if err != nil {
		return store.Fence{}, fmt.Errorf("cluster: claiming %s: %w", ns, err)
	}
	if ok {
		return f, nil
	}
	owner, err := r.st.Resolve(ctx, ns)
	if err != nil {
		return store.Fence{}, fmt.Errorf("cluster: finding the owner of %s: %w", ns, err)
	}
	return store.Fence{}, &agent.OwnedElsewhereError{Namespace: ns, Owner: owner.Replica, URL: owner.ClusterURL}
}

// Release implements agent.Directory.
func (r *Replica) Release(ctx context.Context, f store.Fence) error {
	return r.st.Release(ctx, f)
}

// Resolve returns the owner of the agent ns.
func (r *Replica) Resolve(ctx context.Context, ns string) (lease.Owner, error) {
	return r.st.Resolve(ctx, ns)
}

// LiveReplicas returns the live replicas, least loaded first.
func (r *Replica) LiveReplicas(ctx context.Context) ([]lease.Replica, error) {
	return r.st.LiveReplicas(ctx)
}

// UnownedKeepAwake returns up to limit agents with a keep-awake server
// that no live replica owns, and those whose owner died while a task of
// theirs ran: those to wake eagerly after a replica died or drained.
func (r *Replica) UnownedKeepAwake(ctx context.Context, limit int) ([]string, error) {
	return r.st.UnownedKeepAwake(ctx, limit)
}

// Drain marks the replica as draining: it claims no more agents, and the
// others stop sending it new ones. The caller then hibernates its agents
// and calls Leave.
func (r *Replica) Drain(ctx context.Context) error {
	return r.st.SetReplicaState(ctx, r.ID(), lease.ReplicaDraining)
}

// Leave stops renewing the replica, gives back every lease it holds and
// deletes its row: for a process that closed its agents and exits. It is
// idempotent.
func (r *Replica) Leave(ctx context.Context) error {
	r.mu.Lock()
	if r.left {
		r.mu.Unlock()
		return nil
	}
	r.left = true
	id := r.id
	r.mu.Unlock()
	close(r.quit)
	<-r.done
	r.stopListen()
	<-r.listenDone
	r.hint("") // nothing more will come
	return errors.Join(r.st.ReleaseAll(ctx, id), r.st.DeleteReplica(ctx, id))
}
