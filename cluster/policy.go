package cluster

import (
	"context"
	"errors"
	"time"

	"github.com/agentmcp/agentmcp/cluster/lease"
)

// The replicas' policy: which replica wakes an agent nobody holds, and how
// long a request waits for an owner it cannot reach. Package server
// forwards the requests themselves; these decide where, and when to stop
// waiting.

// RehomeInterval is how often a replica looks for keep-awake agents that
// no replica holds (Rehome).
const RehomeInterval = 2 * time.Second

// Rehome calls RehomeOnce every interval, each round bounded by interval,
// until ctx ends.
func (r *Replica) Rehome(ctx context.Context, interval time.Duration, paused func() bool, wake func(ctx context.Context, ns string)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		rctx, cancel := context.WithTimeout(ctx, interval)
		r.RehomeOnce(rctx, paused, wake)
		cancel()
	}
}

// RehomeOnce wakes here, with wake, the keep-awake agents no replica owns
// (their replica died, or drained), at most 100: such agents must hear
// their servers without waiting for a request. So are the agents whose
// replica died while a task of theirs ran: woken, they resume polling it. The replicas race for
// each; the database's claim lets one win. It does nothing while paused
// reports true (a draining replica) or the Gate is closed.
func (r *Replica) RehomeOnce(ctx context.Context, paused func() bool, wake func(ctx context.Context, ns string)) {
	if paused() || r.Gate() != nil {
		return
	}
	orphans, err := r.UnownedKeepAwake(ctx, 100)
	if err != nil {
		r.logger.Warn("cluster: listing the keep-awake agents nobody holds", "error", err)
		return
	}
	for _, ns := range orphans {
		wake(ctx, ns)
	}
}

// ErrOwnerUnavailable is AwaitOwner's error when its deadline passed and
// the owner it waited for still holds the agent's lease.
var ErrOwnerUnavailable = errors.New("cluster: the replica that holds the agent does not answer")

// ownerRetry is how often a request tries again an owner it cannot reach
// while the owner's lease lasts (AwaitOwner).
const ownerRetry = time.Second

// AwaitOwner looks up the owner of agent ns, which the caller could not
// reach (owner, at url), and waits for it while its lease lasts: until the
// lease would expire (by the database's clock), a hint that the agent was
// given back, or a second, whichever comes first. It returns the owner to
// try next: the same one again, another replica, or a new incarnation at
// the same address; or a zero Owner when the agent is free to wake here
// (no live owner, or this replica). Its error is the look-up's, wraps
// ErrOwnerUnavailable when deadline passed while owner still holds the
// agent, and is ctx.Err() when ctx ended while it waited.
func (r *Replica) AwaitOwner(ctx context.Context, ns, owner, url string, deadline time.Time) (lease.Owner, error) {
	// Watching before the look-up: a hint sent after it is not missed.
	hint, stop := r.Watch(ns)
	defer stop()
	o, err := r.Resolve(ctx, ns)
	switch {
	case err != nil:
		return lease.Owner{}, err
	case o.Replica == "" || !o.Live:
		return lease.Owner{}, nil // free: wake it here
	case o.Replica == r.ID():
		return lease.Owner{}, nil // ours again
	case o.Replica != owner || o.ClusterURL != url:
		// Another owner (perhaps a new incarnation at the same address).
		return o, nil
	}
	left := time.Until(deadline)
	if left <= 0 {
		return lease.Owner{}, ErrOwnerUnavailable
	}
	// The same owner: it may answer again (tried after ownerRetry; a hint
	// may also have been missed), or its lease lapses at its expiry unless
	// it renews it.
	wait := min(ownerRetry, left)
	if o.ExpiresIn < wait {
		wait = o.ExpiresIn + time.Millisecond
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
	case <-hint:
	case <-ctx.Done():
		return lease.Owner{}, ctx.Err()
	}
	return o, nil
}

// Follow takes a request for agent ns to its owner: it calls try with
// the owner (o, the one the caller was told of, first), and while try
// reports that the owner could not be reached it waits for that owner
// (AwaitOwner: until its lease lapses, the agent is given back, or
// deadline) and calls try again with whichever replica holds the agent
// then. An owner with no ClusterURL (none named yet) is not tried, only
// waited for. It returns free when the agent is free to wake here (no
// live owner, or this replica), and false with a nil error once try
// reported done (it answered the request, well or not). Its error is
// AwaitOwner's: ErrOwnerUnavailable when deadline passed while the same
// owner still held the agent, ctx.Err(), or the look-up's.
func (r *Replica) Follow(ctx context.Context, ns string, o lease.Owner, deadline time.Time, try func(o lease.Owner) (done bool)) (free bool, err error) {
	for {
		if o.ClusterURL != "" && try(o) {
			return false, nil
		}
		next, err := r.AwaitOwner(ctx, ns, o.Replica, o.ClusterURL, deadline)
		switch {
		case err != nil:
			return false, err
		case next.Replica == "":
			return true, nil
		}
		o = next
	}
}

// leaseLook bounds how long WatchLease goes without looking.
const leaseLook = 5 * time.Second

// WatchLease calls end when the lease of the agent ns no longer names
// owner as a live replica: owner's row expired (a replica frozen past its
// lease holds its streams open until it resumes), or another replica
// claimed the agent. It looks when the lease would expire (by the
// database's clock), on a hint, and at least every 5 seconds, until ctx
// ends. While nobody holds the agent (owner was only asked to wake it),
// it waits. A stream relayed to owner ends so, and its client reconnects
// to the agent's new owner.
func (r *Replica) WatchLease(ctx context.Context, end func(), ns, owner string) {
	for {
		hint, stop := r.Watch(ns)
		o, err := r.Resolve(ctx, ns)
		wait := leaseLook
		switch {
		case ctx.Err() != nil:
			stop()
			return
		case err != nil:
			// The database does not answer: the replicas' trust windows
			// decide (an owner that cannot renew closes its agents).
		case (o.Replica == owner && !o.Live) || (o.Replica != "" && o.Replica != owner):
			stop()
			end()
			return
		case o.Replica == owner && o.ExpiresIn < wait:
			wait = o.ExpiresIn + time.Millisecond
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-hint:
		case <-ctx.Done():
		}
		t.Stop()
		stop()
	}
}

// Elsewhere returns the replica to wake an agent no replica owns on when
// this one is draining: the least loaded other live replica. It reports
// false when there is none (or the replicas cannot be listed).
func (r *Replica) Elsewhere(ctx context.Context) (lease.Replica, bool) {
	replicas, err := r.LiveReplicas(ctx)
	if err != nil {
		return lease.Replica{}, false
	}
	for _, rep := range replicas {
		if rep.ID != r.ID() && rep.State == lease.ReplicaLive {
			return rep, true
		}
	}
	return lease.Replica{}, false
}
