package cluster

import (
	"errors"
	"testing"
	"time"
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
