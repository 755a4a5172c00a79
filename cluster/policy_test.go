package cluster

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/cluster/lease"
)

// TestPolicy: AwaitOwner tells the caller to wake a free agent here, to
// follow an agent that moved, to give up on an owner that still holds the
// lease past the deadline, and to try the same owner again after a wait;
// Elsewhere names the other live replica; WatchLease ends a relayed
// stream once the owner's lease lapses. (RehomeOnce is server's
// TestClusterRehome.)
func TestPolicy(t *testing.T) {
	c := newCluster(t)
	ctx := testCtx(t)
	st := c.store(t)
	a, _ := join(t, st, "http://127.0.0.1:1001", nil)
	b, _ := join(t, c.store(t), "http://127.0.0.1:1002", nil)

	// Nobody holds test/free: b may wake it.
	if o, err := b.AwaitOwner(ctx, "test/free", a.ID(), "http://127.0.0.1:1001", time.Now().Add(time.Minute)); err != nil || o.Replica != "" {
		t.Errorf("free agent: %+v %v", o, err)
	}
	if _, err := a.Claim(ctx, "test/x"); err != nil {
		t.Fatal(err)
	}
	// a holds test/x: b, told of another owner, follows a.
	if o, err := b.AwaitOwner(ctx, "test/x", "r-gone", "http://127.0.0.1:9", time.Now().Add(time.Minute)); err != nil || o.Replica != a.ID() || o.ClusterURL != "http://127.0.0.1:1001" {
		t.Errorf("moved agent: %+v %v", o, err)
	}
	// a does not answer and its lease lasts: past the deadline, give up.
	if _, err := b.AwaitOwner(ctx, "test/x", a.ID(), "http://127.0.0.1:1001", time.Now().Add(-time.Second)); !errors.Is(err, ErrOwnerUnavailable) {
		t.Errorf("past the deadline: %v", err)
	}
	// Within it, try a again after a wait (at most a second).
	if o, err := b.AwaitOwner(ctx, "test/x", a.ID(), "http://127.0.0.1:1001", time.Now().Add(time.Minute)); err != nil || o.Replica != a.ID() {
		t.Errorf("same owner: %+v %v", o, err)
	}
	if rep, ok := b.Elsewhere(ctx); !ok || rep.ID != a.ID() {
		t.Errorf("Elsewhere: %+v %v", rep, ok)
	}

	ended := make(chan struct{})
	go b.WatchLease(ctx, func() { close(ended) }, "test/x", a.ID())
	c.expire(t, a.ID())
	select {
	case <-ended:
	case <-ctx.Done():
		t.Fatal("WatchLease did not end when the owner's lease lapsed")
	}
	// a's row expired: test/x is free.
	if o, err := b.AwaitOwner(ctx, "test/x", a.ID(), "http://127.0.0.1:1001", time.Now().Add(time.Minute)); err != nil || o.Replica != "" {
		t.Errorf("after the lease lapsed: %+v %v", o, err)
	}

}

// TestFollow: Follow tries the owner it was told of, follows the agent to
// the replica that holds it when that one cannot be reached, gives up on
// an owner that still holds the lease past the deadline, and says when
// the agent is free to wake here; an owner not named yet is only looked
// up.
func TestFollow(t *testing.T) {
	c := newCluster(t)
	ctx := testCtx(t)
	a, _ := join(t, c.store(t), "http://127.0.0.1:1001", nil)
	b, _ := join(t, c.store(t), "http://127.0.0.1:1002", nil)
	if _, err := a.Claim(ctx, "test/x"); err != nil {
		t.Fatal(err)
	}
	held := lease.Owner{Namespace: "test/x", Replica: a.ID(), ClusterURL: "http://127.0.0.1:1001"}
	gone := lease.Owner{Namespace: "test/x", Replica: "r-gone", ClusterURL: "http://127.0.0.1:9"}
	later := time.Now().Add(time.Minute)

	tests := []struct {
		name     string
		ns       string
		from     lease.Owner
		deadline time.Time
		reach    map[string]bool // the replicas (by id) try reaches
		want     []string        // the replicas tried, in order
		free     bool
		err      error
	}{
		{name: "owner answers", ns: "test/x", from: held, deadline: later, reach: map[string]bool{a.ID(): true}, want: []string{a.ID()}},
		{name: "agent moved", ns: "test/x", from: gone, deadline: later, reach: map[string]bool{a.ID(): true}, want: []string{"r-gone", a.ID()}},
		{name: "no owner named", ns: "test/x", from: lease.Owner{Namespace: "test/x"}, deadline: later, reach: map[string]bool{a.ID(): true}, want: []string{a.ID()}},
		{name: "owner silent past the deadline", ns: "test/x", from: held, deadline: time.Now().Add(-time.Second), want: []string{a.ID()}, err: ErrOwnerUnavailable},
		{name: "agent free", ns: "test/free", from: lease.Owner{Namespace: "test/free", Replica: "r-gone", ClusterURL: "http://127.0.0.1:9"}, deadline: later, want: []string{"r-gone"}, free: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tried []string
			free, err := b.Follow(ctx, tt.ns, tt.from, tt.deadline, func(o lease.Owner) bool {
				tried = append(tried, o.Replica)
				return tt.reach[o.Replica]
			})
			if free != tt.free || !errors.Is(err, tt.err) {
				t.Errorf("Follow = %v, %v; want %v, %v", free, err, tt.free, tt.err)
			}
			if !slices.Equal(tried, tt.want) {
				t.Errorf("tried %v; want %v", tried, tt.want)
			}
		})
	}
}
