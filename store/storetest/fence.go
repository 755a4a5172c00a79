package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentmcp/agentmcp/store"
)

// fencedWrites are the server writes a fence applies to, each writing
// something new to namespace ns (whose rows "a" and "b" exist) under ctx.
// called is set when UpdateServer's fn runs.
func fencedWrites(s store.Store, ns string, called *bool) []struct {
	name string
	fn   func(ctx context.Context) error
} {
	return []struct {
		name string
		fn   func(ctx context.Context) error
	}{
		{"PutServer (new row)", func(c context.Context) error { return s.PutServer(c, sample(ns, "new")) }},
		{"PutServer (replace)", func(c context.Context) error {
			srv := sample(ns, "a")
			srv.Name = "replaced"
			return s.PutServer(c, srv)
		}},
		{"PutServers", func(c context.Context) error {
			bp, ok := s.(store.BatchPutter)
			if !ok {
				return s.PutServer(c, sample(ns, "batch"))
			}
			// A row of another namespace does not exempt the batch.
			return bp.PutServers(c, []store.Server{sample("other/ns", "x"), sample(ns, "batch")})
		}},
		{"UpdateServer", func(c context.Context) error {
			return s.UpdateServer(c, ns, "a", func(srv *store.Server) error {
				*called = true
				srv.Name = "updated"
				return nil
			})
		}},
		{"DeleteServer", func(c context.Context) error { return s.DeleteServer(c, ns, "a") }},
		{"RenameServer", func(c context.Context) error { return s.RenameServer(c, ns, "b", "renamed") }},
		{"PutExposure", func(c context.Context) error {
			es, ok := s.(store.ExposureStore)
			if !ok {
				return s.PutServer(c, sample(ns, "exposure"))
			}
			return es.PutExposure(c, ns, store.Exposure{Deny: []string{"fenced"}})
		}},
	}
}

// snapshot is everything the fenced writes could change.
type snapshot struct {
	Servers  map[string][]store.Server
	KV       map[string]map[string]string
	Exposure map[string]store.Exposure
}

func takeSnapshot(t *testing.T, s store.Store, namespaces ...string) snapshot {
	t.Helper()
	snap := snapshot{Servers: map[string][]store.Server{}, KV: map[string]map[string]string{}, Exposure: map[string]store.Exposure{}}
	for _, ns := range namespaces {
		if es, ok := s.(store.ExposureStore); ok {
			e, err := es.GetExposure(ctx(t), ns)
			if err != nil {
				t.Fatalf("GetExposure(%q): %v", ns, err)
			}
			snap.Exposure[ns] = e
		}
		list, err := s.ListServers(ctx(t), ns)
		if err != nil {
			t.Fatalf("ListServers(%q): %v", ns, err)
		}
		snap.Servers[ns] = list
		for _, id := range []string{"a", "b", "renamed"} {
			snap.KV[ns+" "+id] = kvList(t, s, ns, id, "")
		}
	}
	return snap
}

// testFenceStale checks that every server write made under a fence that is
// no longer the agent's current ownership (an older epoch of the same
// replica, a replica the lease was taken from, a fence of an agent never
// claimed, the current epoch under another replica's name) fails with
// ErrFenced and writes nothing, while key-value writes and locks under the
// same fence, and writes to other namespaces, go through.
func testFenceStale(t *testing.T, b Backend) {
	if b.Claim == nil {
		t.Skip("the backend ignores fences")
	}
	s := b.Open(t, Options{})
	c := ctx(t)
	for _, id := range []string{"a", "b"} {
		mustPut(t, s, sample(ns, id))
		mustKVPut(t, s, ns, id, "token", "t-"+id, time.Time{})
	}
	old := b.Claim(t, s, ns, "r1")
	taken := b.Claim(t, s, ns, "r2")
	current := b.Claim(t, s, ns, "r1")
	if !(old.Epoch < taken.Epoch && taken.Epoch < current.Epoch) {
		t.Fatalf("epochs of three claims in turn: %d, %d, %d; want increasing", old.Epoch, taken.Epoch, current.Epoch)
	}
	stale := []struct {
		name  string
		fence store.Fence
	}{
		{"older epoch of the same replica", old},
		{"replica the lease was taken from", taken},
		{"current epoch, another replica", store.Fence{Namespace: ns, Replica: "r2", Epoch: current.Epoch}},
	}
	before := takeSnapshot(t, s, ns, "other/ns")
	for _, st := range stale {
		fc := store.WithFence(c, st.fence)
		var called bool
		for _, w := range fencedWrites(s, ns, &called) {
			if err := w.fn(fc); !errors.Is(err, store.ErrFenced) {
				t.Errorf("%s under the fence of the %s: %v, want ErrFenced", w.name, st.name, err)
			}
		}
		if called {
			t.Errorf("UpdateServer under the fence of the %s called fn", st.name)
		}
	}
	if diff := cmp.Diff(before, takeSnapshot(t, s, ns, "other/ns")); diff != "" {
		t.Fatalf("fenced writes changed the store (-before +after):\n%s", diff)
	}

	// An agent never claimed has no owner: every fence of it is stale.
	const never = "chat/never"
	var called bool
	for _, w := range fencedWrites(s, never, &called) {
		if err := w.fn(store.WithFence(c, store.Fence{Namespace: never, Replica: "r1", Epoch: current.Epoch})); !errors.Is(err, store.ErrFenced) {
			t.Errorf("%s under a fence of an agent never claimed: %v, want ErrFenced", w.name, err)
		}
	}
	if got := ids(t, s, never); len(got) != 0 {
		t.Fatalf("rows of an agent never claimed after fenced writes: %q", got)
	}

	// Not fenced under the stale fence: OAuth data and locks of ns, and
	// every write to another namespace.
	fc := store.WithFence(c, taken)
	if err := s.KVPut(fc, ns, "a", "token", []byte("rotated"), time.Time{}); err != nil {
		t.Fatalf("KVPut under a stale fence: %v", err)
	}
	if v, err := s.KVTake(fc, ns, "a", "token"); err != nil || string(v) != "rotated" {
		t.Fatalf("KVTake under a stale fence = %q, %v", v, err)
	}
	if err := s.KVDelete(fc, ns, "b", "token"); err != nil {
		t.Fatalf("KVDelete under a stale fence: %v", err)
	}
	if err := s.WithLock(fc, ns, "a", "refresh", func(context.Context) error { return nil }); err != nil {
		t.Fatalf("WithLock under a stale fence: %v", err)
	}
	for _, w := range fencedWrites(s, "other/ns", &called) {
		if w.name == "PutServers" {
			continue // it has a row of ns
		}
		if err := w.fn(fc); err != nil && !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s of another namespace under a stale fence: %v", w.name, err)
		}
	}

	// The current fence writes.
	called = false
	for _, w := range fencedWrites(s, ns, &called) {
		if err := w.fn(store.WithFence(c, current)); err != nil {
			t.Errorf("%s under the current fence: %v", w.name, err)
		}
	}
	if got, want := ids(t, s, ns), []string{"renamed", "new", "batch"}; !cmp.Equal(got, want) {
		t.Fatalf("servers after the current fence's writes = %q, want %q", got, want)
	}
}

// testFenceCurrent checks that a claimed agent's owner writes under its
// fence as without one.
func testFenceCurrent(t *testing.T, b Backend) {
	if b.Claim == nil {
		t.Skip("the backend ignores fences")
	}
	s := b.Open(t, Options{})
	fc := store.WithFence(ctx(t), b.Claim(t, s, ns, "r1"))
	for _, id := range []string{"a", "b"} {
		if err := s.PutServer(fc, sample(ns, id)); err != nil {
			t.Fatalf("PutServer under the current fence: %v", err)
		}
	}
	var called bool
	for _, w := range fencedWrites(s, ns, &called) {
		if err := w.fn(fc); err != nil {
			t.Fatalf("%s under the current fence: %v", w.name, err)
		}
	}
	if !called {
		t.Fatal("UpdateServer under the current fence did not call fn")
	}
	if got, want := ids(t, s, ns), []string{"renamed", "new", "batch"}; !cmp.Equal(got, want) {
		t.Fatalf("servers after the fenced writes = %q, want %q", got, want)
	}
}

// testFenceIgnored checks that a backend without fencing writes under any
// fence.
func testFenceIgnored(t *testing.T, b Backend) {
	if b.Claim != nil {
		t.Skip("the backend fences writes")
	}
	s := b.Open(t, Options{})
	c := ctx(t)
	for _, id := range []string{"a", "b"} {
		mustPut(t, s, sample(ns, id))
	}
	fc := store.WithFence(c, store.Fence{Namespace: ns, Replica: "nobody", Epoch: 1})
	var called bool
	for _, w := range fencedWrites(s, ns, &called) {
		if err := w.fn(fc); err != nil {
			t.Fatalf("%s under a fence, on a backend that ignores fences: %v", w.name, err)
		}
	}
	if got, want := ids(t, s, ns), []string{"renamed", "new", "batch"}; !cmp.Equal(got, want) {
		t.Fatalf("servers after the writes = %q, want %q", got, want)
	}
}
