package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/agentmcp/agentmcp/cluster"
	"github.com/agentmcp/agentmcp/cluster/lease"
	"github.com/agentmcp/agentmcp/store"
)

// Store is the lease store of package cluster.
var _ cluster.LeaseStore = (*Store)(nil)

// leaseCtx returns a context that ends with t or after a minute, so that a
// deadlock fails the test instead of hanging it.
func leaseCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// openStores opens n Stores on one new database, as n replicas would.
func openStores(t *testing.T, n int) []*Store {
	t.Helper()
	dsn := pg.Database(t)
	out := make([]*Store, n)
	for i := range out {
		s, err := Open(t.Context(), dsn, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		out[i] = s
	}
	return out
}

func mustRegister(t *testing.T, s *Store, id string, ttl time.Duration) {
	t.Helper()
	if err := s.RegisterReplica(t.Context(), id, "http://127.0.0.1:9/"+id, "v1", ttl); err != nil {
		t.Fatalf("RegisterReplica(%q): %v", id, err)
	}
}

func mustClaim(t *testing.T, s *Store, ns, replica string) store.Fence {
	t.Helper()
	f, ok, err := s.Claim(t.Context(), ns, replica)
	if err != nil || !ok {
		t.Fatalf("Claim(%q, %q) = %v, %v; want a claim", ns, replica, ok, err)
	}
	if f.Namespace != ns || f.Replica != replica || f.Epoch <= 0 {
		t.Fatalf("Claim(%q, %q) = %+v", ns, replica, f)
	}
	return f
}

func mustNotClaim(t *testing.T, s *Store, ns, replica, why string) {
	t.Helper()
	if f, ok, err := s.Claim(t.Context(), ns, replica); err != nil || ok {
		t.Fatalf("Claim(%q, %q) %s = %+v, %v, %v; want no claim", ns, replica, why, f, ok, err)
	}
}

func mustResolve(t *testing.T, s *Store, ns string) lease.Owner {
	t.Helper()
	o, err := s.Resolve(t.Context(), ns)
	if err != nil {
		t.Fatalf("Resolve(%q): %v", ns, err)
	}
	return o
}

func server(ns, id, name string) store.Server {
	return store.Server{Namespace: ns, ID: id, Name: name, URL: "https://mcp.example.com/" + id}
}

// TestClaimRace has two replicas, on two Stores, race to claim one agent 50
// times: each round exactly one wins, Resolve names it, and after its
// release the next round's epoch is higher.
func TestClaimRace(t *testing.T) {
	stores := openStores(t, 2)
	ctx := leaseCtx(t)
	const ns, rounds = "chat/race", 50
	replicas := []string{"r0", "r1"}
	for i, id := range replicas {
		mustRegister(t, stores[i], id, time.Hour)
	}
	var last int64
	wins := map[string]int{}
	for round := range rounds {
		start := make(chan struct{})
		type result struct {
			f   store.Fence
			ok  bool
			err error
		}
		results := make([]result, 2)
		var wg sync.WaitGroup
		for i := range replicas {
			wg.Go(func() {
				<-start
				f, ok, err := stores[i].Claim(ctx, ns, replicas[i])
				results[i] = result{f, ok, err}
			})
		}
		close(start)
		wg.Wait()
		var winner *store.Fence
		for i, r := range results {
			if r.err != nil {
				t.Fatalf("round %d: Claim by %s: %v", round, replicas[i], r.err)
			}
			if r.ok {
				if winner != nil {
					t.Fatalf("round %d: both replicas claimed the agent: %+v and %+v", round, *winner, r.f)
				}
				winner = &results[i].f
			}
		}
		if winner == nil {
			t.Fatalf("round %d: neither replica claimed an unowned agent", round)
		}
		if winner.Epoch <= last {
			t.Fatalf("round %d: epoch %d after %d; want a higher one", round, winner.Epoch, last)
		}
		last = winner.Epoch
		wins[winner.Replica]++
		o := mustResolve(t, stores[0], ns)
		if o.Replica != winner.Replica || o.Epoch != winner.Epoch || !o.Live || o.State != lease.ReplicaLive {
			t.Fatalf("round %d: Resolve = %+v after %+v won", round, o, *winner)
		}
		if err := stores[round%2].Release(ctx, *winner); err != nil {
			t.Fatalf("round %d: Release: %v", round, err)
		}
	}
	t.Logf("claim_race_rounds=%d wins_r0=%d wins_r1=%d", rounds, wins["r0"], wins["r1"])
}

// TestExpiredReplica checks a replica registered with a ttl already past:
// it is not live, its lease can be claimed by another replica, its
// Heartbeat returns false for ever, and its fenced writes are refused and
// never applied.
func TestExpiredReplica(t *testing.T) {
	s := openStores(t, 1)[0]
	ctx := leaseCtx(t)
	const ns = "chat/expired"
	mustRegister(t, s, "dead", -time.Second)
	mustRegister(t, s, "r2", time.Hour)
	for _, id := range []string{"a", "b"} {
		if err := s.PutServer(ctx, server(ns, id, "before")); err != nil {
			t.Fatal(err)
		}
		if err := s.KVPut(ctx, ns, id, "token", []byte("t-"+id), time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	before, err := s.ListServers(ctx, ns)
	if err != nil {
		t.Fatal(err)
	}

	live, err := s.LiveReplicas(ctx)
	if err != nil || len(live) != 1 || live[0].ID != "r2" {
		t.Fatalf("LiveReplicas = %+v, %v; want r2 only", live, err)
	}
	mustNotClaim(t, s, "chat/other", "dead", "by a replica whose ttl is past")

	// A lease it holds (as if claimed before it expired) is not valid.
	dead := forceLease(t, s, ns, "dead")
	if o := mustResolve(t, s, ns); o.Replica != "dead" || o.Live || o.Epoch != dead.Epoch || o.ExpiresIn != 0 {
		t.Fatalf("Resolve of the expired replica's agent = %+v", o)
	}
	for i := range 3 {
		if ok, err := s.Heartbeat(ctx, "dead", time.Hour, 1); err != nil || ok {
			t.Fatalf("Heartbeat %d of an expired replica = %v, %v; want false", i, ok, err)
		}
	}
	if err := s.SetReplicaState(ctx, "dead", lease.ReplicaLive); err != nil {
		t.Fatal(err)
	}
	if err := s.RegisterReplica(ctx, "dead", "http://127.0.0.1:9/dead", "v1", time.Hour); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("RegisterReplica of an expired id: %v, want ErrConflict", err)
	}
	if o := mustResolve(t, s, ns); o.Live {
		t.Fatalf("after heartbeats, a state change and a second registration, the expired replica's lease is live: %+v", o)
	}
	if leases, err := s.Leases(ctx, "dead"); err != nil || len(leases) != 0 {
		t.Fatalf("Leases of the expired replica = %+v, %v; want none", leases, err)
	}

	refused := func(when string, f store.Fence) {
		t.Helper()
		fc := store.WithFence(ctx, f)
		called := false
		for name, err := range map[string]error{
			"PutServer":    s.PutServer(fc, server(ns, "a", "stale")),
			"PutServers":   s.PutServers(fc, []store.Server{server(ns, "c", "stale")}),
			"UpdateServer": s.UpdateServer(fc, ns, "a", func(srv *store.Server) error { called = true; srv.Name = "stale"; return nil }),
			"DeleteServer": s.DeleteServer(fc, ns, "b"),
			"RenameServer": s.RenameServer(fc, ns, "b", "z"),
		} {
			if !errors.Is(err, store.ErrFenced) {
				t.Errorf("%s: %s: %v, want ErrFenced", when, name, err)
			}
		}
		if called {
			t.Errorf("%s: UpdateServer called fn", when)
		}
		after, err := s.ListServers(ctx, ns)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(before, after); diff != "" {
			t.Fatalf("%s: fenced writes changed the rows (-before +after):\n%s", when, diff)
		}
		if v, err := s.KVGet(ctx, ns, "b", "token"); err != nil || string(v) != "t-b" {
			t.Fatalf("%s: a refused DeleteServer touched the key-value entries: %q, %v", when, v, err)
		}
	}
	refused("expired owner", dead)

	r2 := mustClaim(t, s, ns, "r2")
	if r2.Epoch <= dead.Epoch {
		t.Fatalf("epoch of the takeover %d, of the expired lease %d", r2.Epoch, dead.Epoch)
	}
	refused("expired owner after a takeover", dead)
	if err := s.UpdateServer(store.WithFence(ctx, r2), ns, "a", func(srv *store.Server) error { srv.Name = "r2"; return nil }); err != nil {
		t.Fatalf("write under the new owner's fence: %v", err)
	}
	if o := mustResolve(t, s, ns); o.Replica != "r2" || !o.Live || o.Epoch != r2.Epoch || o.ClusterURL != "http://127.0.0.1:9/r2" ||
		o.ExpiresIn <= 59*time.Minute || o.ExpiresIn > time.Hour {
		t.Fatalf("Resolve after the takeover = %+v (ExpiresIn: want the hour r2 registered for, less the test's time)", o)
	}
}

// TestReleaseAndReclaim checks that a released agent has no owner and is
// claimable with a higher epoch, and that writes and releases under an
// older epoch are refused after the re-claim, also by the same replica.
func TestReleaseAndReclaim(t *testing.T) {
	s := openStores(t, 1)[0]
	ctx := leaseCtx(t)
	const ns = "chat/release"
	mustRegister(t, s, "r1", time.Hour)
	mustRegister(t, s, "r2", time.Hour)
	if o := mustResolve(t, s, ns); o != (lease.Owner{Namespace: ns}) {
		t.Fatalf("Resolve of an agent never claimed = %+v", o)
	}
	f0 := mustClaim(t, s, ns, "r1")
	mustNotClaim(t, s, ns, "r2", "while r1 owns it")
	// A claim by the owner takes a new epoch and fences the earlier one.
	f1 := mustClaim(t, s, ns, "r1")
	if f1.Epoch <= f0.Epoch {
		t.Fatalf("re-claim by the owner: epoch %d after %d", f1.Epoch, f0.Epoch)
	}
	if err := s.PutServer(store.WithFence(ctx, f0), server(ns, "a", "r1 before")); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("write under the owner's earlier epoch: %v, want ErrFenced", err)
	}
	if err := s.PutServer(store.WithFence(ctx, f1), server(ns, "a", "r1")); err != nil {
		t.Fatal(err)
	}

	if err := s.Release(ctx, f1); err != nil {
		t.Fatal(err)
	}
	if o := mustResolve(t, s, ns); o != (lease.Owner{Namespace: ns, Epoch: f1.Epoch}) {
		t.Fatalf("Resolve of a released agent = %+v", o)
	}
	if err := s.Release(ctx, f1); err != nil {
		t.Fatalf("second Release: %v", err)
	}
	if err := s.PutServer(store.WithFence(ctx, f1), server(ns, "a", "after release")); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("write after the release: %v, want ErrFenced", err)
	}

	f2 := mustClaim(t, s, ns, "r2")
	if f2.Epoch <= f1.Epoch {
		t.Fatalf("re-claim epoch %d, released epoch %d", f2.Epoch, f1.Epoch)
	}
	if err := s.Release(ctx, f1); err != nil {
		t.Fatal(err)
	}
	if o := mustResolve(t, s, ns); o.Replica != "r2" || o.Epoch != f2.Epoch {
		t.Fatalf("a release under the old epoch undid the re-claim: %+v", o)
	}
	if err := s.Release(ctx, f2); err != nil {
		t.Fatal(err)
	}
	f3 := mustClaim(t, s, ns, "r1")
	for _, stale := range []store.Fence{f1, f2} {
		err := s.UpdateServer(store.WithFence(ctx, stale), ns, "a", func(srv *store.Server) error { srv.Name = "stale"; return nil })
		if !errors.Is(err, store.ErrFenced) {
			t.Fatalf("write under epoch %d of %s after the re-claim with %d: %v, want ErrFenced", stale.Epoch, stale.Replica, f3.Epoch, err)
		}
	}
	if srv, err := s.GetServer(ctx, ns, "a"); err != nil || srv.Name != "r1" {
		t.Fatalf("server after refused writes: %+v, %v", srv, err)
	}
	if leases, err := s.Leases(ctx, "r1"); err != nil || !cmp.Equal(leases, []store.Fence{f3}) {
		t.Fatalf("Leases(r1) = %+v, %v; want %+v", leases, err, f3)
	}
}

// TestClaimWaitsForFencedWrite checks the FOR SHARE ordering: a claim of an
// agent whose owner expired while a fenced write of it was in progress
// waits until that write commits, then succeeds, and the write is visible.
func TestClaimWaitsForFencedWrite(t *testing.T) {
	stores := openStores(t, 2)
	s1, s2 := stores[0], stores[1]
	ctx := leaseCtx(t)
	const ns = "chat/share"
	mustRegister(t, s1, "r1", time.Hour)
	mustRegister(t, s2, "r2", time.Hour)
	f1 := mustClaim(t, s1, ns, "r1")
	if err := s1.PutServer(store.WithFence(ctx, f1), server(ns, "a", "first")); err != nil {
		t.Fatal(err)
	}

	entered, proceed := make(chan struct{}), make(chan struct{})
	updated := make(chan error, 1)
	go func() {
		updated <- s1.UpdateServer(store.WithFence(ctx, f1), ns, "a", func(srv *store.Server) error {
			close(entered)
			select {
			case <-proceed:
			case <-ctx.Done(): // the test failed
				return ctx.Err()
			}
			srv.Name = "written by r1"
			return nil
		})
	}()
	<-entered
	// r1 misses its heartbeats: its row expires while its write holds the
	// lease row share-locked.
	if ok, err := s1.Heartbeat(ctx, "r1", -time.Second, 0); err != nil || !ok {
		t.Fatalf("Heartbeat that expires r1 = %v, %v", ok, err)
	}
	type claimed struct {
		f   store.Fence
		ok  bool
		err error
	}
	claims := make(chan claimed, 1)
	go func() {
		f, ok, err := s2.Claim(ctx, ns, "r2")
		claims <- claimed{f, ok, err}
	}()
	// Wait until the claim waits for a lock; it must not return before.
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for waiting := 0; waiting == 0; {
		select {
		case c := <-claims:
			t.Fatalf("Claim returned while a fenced write held the lease: %+v", c)
		case <-tick.C:
		}
		if err := s1.pool.QueryRow(ctx, `
			SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting); err != nil {
			t.Fatalf("waiting for the claim to wait: %v", err)
		}
	}
	close(proceed)
	if err := <-updated; err != nil {
		t.Fatalf("fenced UpdateServer: %v", err)
	}
	c := <-claims
	if c.err != nil || !c.ok || c.f.Epoch <= f1.Epoch {
		t.Fatalf("Claim after the fenced write = %+v", c)
	}
	if srv, err := s2.GetServer(ctx, ns, "a"); err != nil || srv.Name != "written by r1" {
		t.Fatalf("the new owner reads %+v, %v; want the committed write", srv, err)
	}
	if err := s1.UpdateServer(store.WithFence(ctx, f1), ns, "a", func(srv *store.Server) error { srv.Name = "late"; return nil }); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("write of the old owner after the takeover: %v, want ErrFenced", err)
	}
}

// TestClaimSeesLateReplica checks that a claim never takes an agent from
// a replica that registered after the claim's statement began: replica B's
// claim of the agent is in flight (its row inserted, not committed) when A's
// claim starts and waits for that row; B's registration commits only then
// (standing for a registration and claim that both fit in the moment
// between A's snapshot and its insert). A must see B as live and not claim.
func TestClaimSeesLateReplica(t *testing.T) {
	stores := openStores(t, 2)
	a, b := stores[0], stores[1]
	ctx := leaseCtx(t)
	const ns = "chat/late"
	mustRegister(t, a, "A", time.Hour)
	tx, err := b.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	var epoch int64
	if err := tx.QueryRow(ctx, `
		INSERT INTO agentmcp_agents (namespace, owner, epoch, claimed_at)
		VALUES ($1, 'B', nextval('agentmcp_lease_epoch'), now()) RETURNING epoch`, ns).Scan(&epoch); err != nil {
		t.Fatal(err)
	}
	type claimed struct {
		f   store.Fence
		ok  bool
		err error
	}
	claims := make(chan claimed, 1)
	go func() {
		f, ok, err := a.Claim(ctx, ns, "A")
		claims <- claimed{f, ok, err}
	}()
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for waiting := 0; waiting == 0; {
		select {
		case c := <-claims:
			t.Fatalf("Claim returned while another claim of the agent was in flight: %+v", c)
		case <-tick.C:
		}
		if err := b.pool.QueryRow(ctx, `
			SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
	}
	mustRegister(t, b, "B", time.Hour)
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if c := <-claims; c.err != nil || c.ok {
		t.Fatalf("Claim by A of an agent B had just claimed = %+v; want no claim", c)
	}
	if o := mustResolve(t, a, ns); o.Replica != "B" || o.Epoch != epoch || !o.Live {
		t.Fatalf("Resolve = %+v; want B's lease, epoch %d", o, epoch)
	}
}

// TestClaimWaitsForHeartbeat checks that a claim never takes an agent
// from a replica whose heartbeat is renewing it: the owner's renewal is in
// flight (its guard passed while the row was live, not committed) when
// another replica, judging the row expired, claims the agent. The claim
// waits for the renewal and then finds the owner live.
func TestClaimWaitsForHeartbeat(t *testing.T) {
	stores := openStores(t, 2)
	a, b := stores[0], stores[1]
	ctx := leaseCtx(t)
	const ns = "chat/renewing"
	mustRegister(t, a, "A", -time.Second)
	mustRegister(t, b, "B", time.Hour)
	forceLease(t, a, ns, "A")
	tx, err := a.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	// Heartbeat's statement without its guard: the guard passed a moment
	// before the row expired.
	if _, err := tx.Exec(ctx, `UPDATE agentmcp_replicas SET heartbeat_at = now(), expires_at = now() + interval '1 hour' WHERE id = 'A'`); err != nil {
		t.Fatal(err)
	}
	type claimed struct {
		f   store.Fence
		ok  bool
		err error
	}
	claims := make(chan claimed, 1)
	go func() {
		f, ok, err := b.Claim(ctx, ns, "B")
		claims <- claimed{f, ok, err}
	}()
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for waiting := 0; waiting == 0; {
		select {
		case c := <-claims:
			t.Fatalf("Claim returned while the owner's heartbeat was in flight: %+v", c)
		case <-tick.C:
		}
		if err := b.pool.QueryRow(ctx, `
			SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if c := <-claims; c.err != nil || c.ok {
		t.Fatalf("Claim of a renewed replica's agent = %+v; want no claim", c)
	}
	if o := mustResolve(t, b, ns); o.Replica != "A" || !o.Live {
		t.Fatalf("Resolve = %+v; want A's live lease", o)
	}
}

// TestHeartbeatAfterTakeover checks that a renewal that waited for a
// claim taking a lease from its replica fails once that claim commits: the
// claim's mark on the replica row (fenced_at) is written in a transaction
// held open here, the heartbeat waits for it and then re-checks its guard.
func TestHeartbeatAfterTakeover(t *testing.T) {
	s := openStores(t, 1)[0]
	ctx := leaseCtx(t)
	mustRegister(t, s, "A", time.Hour)
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if _, err := tx.Exec(ctx, `UPDATE agentmcp_replicas SET fenced_at = now() WHERE id = 'A'`); err != nil {
		t.Fatal(err)
	}
	type beat struct {
		ok  bool
		err error
	}
	beats := make(chan beat, 1)
	go func() {
		ok, err := s.Heartbeat(ctx, "A", time.Hour, 0)
		beats <- beat{ok, err}
	}()
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for waiting := 0; waiting == 0; {
		select {
		case b := <-beats:
			t.Fatalf("Heartbeat returned while a claim held the replica row: %+v", b)
		case <-tick.C:
		}
		if err := s.pool.QueryRow(ctx, `
			SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if b := <-beats; b.err != nil || b.ok {
		t.Fatalf("Heartbeat after the takeover = %+v; want false", b)
	}
}

// TestClaimOrphans has two replicas claim, all at once, the 20 agents of a
// replica whose row expired: each agent is claimed exactly once and no
// claim fails (serialization failures on the dead replica's row are
// retried).
func TestClaimOrphans(t *testing.T) {
	stores := openStores(t, 2)
	ctx := leaseCtx(t)
	mustRegister(t, stores[0], "dead", -time.Second)
	mustRegister(t, stores[0], "r0", time.Hour)
	mustRegister(t, stores[1], "r1", time.Hour)
	const agents = 20
	for i := range agents {
		forceLease(t, stores[0], fmt.Sprintf("chat/o%02d", i), "dead")
	}
	start := make(chan struct{})
	var mu sync.Mutex
	won := map[string][]string{}
	var errs []error
	var wg sync.WaitGroup
	for r := range 2 {
		for i := range agents {
			wg.Go(func() {
				<-start
				ns := fmt.Sprintf("chat/o%02d", i)
				f, ok, err := stores[r].Claim(ctx, ns, fmt.Sprintf("r%d", r))
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, err)
				}
				if ok {
					won[ns] = append(won[ns], f.Replica)
				}
			})
		}
	}
	close(start)
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d claims failed, first: %v", len(errs), errs[0])
	}
	for i := range agents {
		ns := fmt.Sprintf("chat/o%02d", i)
		if len(won[ns]) != 1 {
			t.Errorf("%s claimed by %q; want exactly one replica", ns, won[ns])
		}
	}
	if ok, err := stores[0].Heartbeat(ctx, "dead", time.Hour, 0); err != nil || ok {
		t.Fatalf("Heartbeat of the dead replica = %v, %v", ok, err)
	}
}

// TestListen checks that Listen reports that it listens, then receives the
// notifications of Release, ReleaseAll and Notify, and returns nil when its
// context ends.
func TestListen(t *testing.T) {
	stores := openStores(t, 2)
	s, other := stores[0], stores[1]
	ctx := leaseCtx(t)
	lctx, cancel := context.WithCancel(ctx)
	payloads := make(chan string, 16)
	done := make(chan error, 1)
	go func() { done <- s.Listen(lctx, func(p string) { payloads <- p }) }()
	next := func() string {
		t.Helper()
		select {
		case p := <-payloads:
			return p
		case <-ctx.Done():
			t.Fatal("no notification")
			return ""
		}
	}
	if p := next(); p != "" {
		t.Fatalf("first call of fn = %q, want \"\" (listening)", p)
	}

	mustRegister(t, other, "r1", time.Hour)
	f := mustClaim(t, other, "chat/a", "r1")
	if err := other.Release(ctx, f); err != nil {
		t.Fatal(err)
	}
	if p := next(); p != "chat/a" {
		t.Fatalf("notification of Release = %q, want chat/a", p)
	}
	if err := other.Release(ctx, f); err != nil { // nothing released: nothing sent
		t.Fatal(err)
	}
	mustClaim(t, other, "chat/b", "r1")
	mustClaim(t, other, "chat/c", "r1")
	if err := other.ReleaseAll(ctx, "r1"); err != nil {
		t.Fatal(err)
	}
	if err := other.Notify(ctx, "hint"); err != nil {
		t.Fatal(err)
	}
	got := []string{next(), next(), next()}
	if diff := cmp.Diff([]string{"chat/b", "chat/c", "hint"}, got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Fatalf("notifications of ReleaseAll and Notify (-want +got):\n%s", diff)
	}
	if got[2] != "hint" {
		t.Fatalf("notifications out of order: %q", got)
	}
	if o := mustResolve(t, other, "chat/b"); o.Replica != "" {
		t.Fatalf("after ReleaseAll, chat/b is owned: %+v", o)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Listen after its context ended: %v", err)
	}
	select {
	case p := <-payloads:
		t.Fatalf("unexpected notification %q", p)
	default:
	}
}

// TestReplicas checks the replica rows: LiveReplicas' order and contents,
// heartbeats, draining (no claims), deletion (its leases become invalid)
// and cleanup of long-expired rows.
func TestReplicas(t *testing.T) {
	s := openStores(t, 1)[0]
	ctx := leaseCtx(t)
	for _, id := range []string{"a", "b", "c"} {
		mustRegister(t, s, id, time.Hour)
	}
	mustRegister(t, s, "gone", -2*time.Hour)
	mustRegister(t, s, "recent", -time.Second)
	for id, awake := range map[string]int{"a": 5, "b": 1, "c": 0} {
		if ok, err := s.Heartbeat(ctx, id, time.Hour, awake); err != nil || !ok {
			t.Fatalf("Heartbeat(%q) = %v, %v", id, ok, err)
		}
	}
	if err := s.SetReplicaState(ctx, "c", lease.ReplicaDraining); err != nil {
		t.Fatal(err)
	}
	live, err := s.LiveReplicas(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range live {
		if !r.Live || r.Version != "v1" || r.ClusterURL != "http://127.0.0.1:9/"+r.ID || time.Until(r.ExpiresAt) < 50*time.Minute {
			t.Errorf("LiveReplicas: %+v", r)
		}
		got = append(got, fmt.Sprintf("%s:%s:%d", r.ID, r.State, r.AwakeAgents))
	}
	if want := []string{"b:live:1", "a:live:5", "c:draining:0"}; !cmp.Equal(got, want) {
		t.Fatalf("LiveReplicas = %q, want %q", got, want)
	}
	if err := s.SetReplicaState(ctx, "c", "sleeping"); err == nil {
		t.Fatal("SetReplicaState with an unknown state: nil error")
	}
	if err := s.SetReplicaState(ctx, "nobody", lease.ReplicaLive); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("SetReplicaState of an unknown replica: %v, want ErrNotFound", err)
	}
	mustNotClaim(t, s, "chat/x", "c", "by a draining replica")
	mustNotClaim(t, s, "chat/x", "nobody", "by an unregistered replica")

	f := mustClaim(t, s, "chat/x", "a")
	if err := s.DeleteReplica(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if o := mustResolve(t, s, "chat/x"); o.Replica != "a" || o.Live || o.ClusterURL != "" || o.State != "" {
		t.Fatalf("Resolve of an agent whose owner's row is deleted = %+v", o)
	}
	if err := s.PutServer(store.WithFence(ctx, f), server("chat/x", "s", "n")); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("write of a deleted replica: %v, want ErrFenced", err)
	}
	mustClaim(t, s, "chat/x", "b")
	if ok, err := s.Heartbeat(ctx, "a", time.Hour, 0); err != nil || ok {
		t.Fatalf("Heartbeat of a deleted replica = %v, %v; want false", ok, err)
	}

	n, err := s.CleanupReplicas(ctx, time.Hour)
	if err != nil || n != 1 {
		t.Fatalf("CleanupReplicas(1h) = %d, %v; want 1 (gone)", n, err)
	}
	var left []string
	rows, err := s.pool.Query(ctx, `SELECT id FROM agentmcp_replicas ORDER BY id`)
	if err == nil {
		for rows.Next() {
			var id string
			rows.Scan(&id)
			left = append(left, id)
		}
		err = rows.Err()
	}
	if err != nil || !cmp.Equal(left, []string{"b", "c", "recent"}) {
		t.Fatalf("replica rows after cleanup = %q, %v", left, err)
	}
}

// TestUnownedKeepAwake checks that the agents with a keep-awake server and
// no valid lease are listed: never claimed, released, or owned by an
// expired replica; not those with a live owner or without keep-awake
// servers.
func TestUnownedKeepAwake(t *testing.T) {
	s := openStores(t, 1)[0]
	ctx := leaseCtx(t)
	mustRegister(t, s, "live", time.Hour)
	mustRegister(t, s, "dead", -time.Second)
	for _, ns := range []string{"k/never", "k/owned", "k/released", "k/orphan", "plain/never"} {
		srv := server(ns, "s", "n")
		srv.KeepAwake = ns[0] == 'k'
		if err := s.PutServer(ctx, srv); err != nil {
			t.Fatal(err)
		}
	}
	mustClaim(t, s, "k/owned", "live")
	if err := s.Release(ctx, mustClaim(t, s, "k/released", "live")); err != nil {
		t.Fatal(err)
	}
	forceLease(t, s, "k/orphan", "dead")
	// Agents with a task: running under a dead owner (listed), under a
	// live one, released (their hibernating replica wakes them), ended.
	for _, ns := range []string{"t/orphan", "t/owned", "t/released", "t/ended"} {
		if err := s.PutServer(ctx, server(ns, "s", "n")); err != nil {
			t.Fatal(err)
		}
		if err := s.PutTask(ctx, store.Task{Namespace: ns, ServerID: "s", TaskID: "t1", Tool: "work", Status: "working", Done: ns == "t/ended"}); err != nil {
			t.Fatal(err)
		}
	}
	forceLease(t, s, "t/orphan", "dead")
	forceLease(t, s, "t/ended", "dead")
	mustClaim(t, s, "t/owned", "live")
	if err := s.Release(ctx, mustClaim(t, s, "t/released", "live")); err != nil {
		t.Fatal(err)
	}
	got, err := s.UnownedKeepAwake(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"k/never", "k/orphan", "k/released", "t/orphan"}; !cmp.Equal(got, want) {
		t.Fatalf("UnownedKeepAwake = %q, want %q", got, want)
	}
	if got, err := s.UnownedKeepAwake(ctx, 2); err != nil || len(got) != 2 {
		t.Fatalf("UnownedKeepAwake(2) = %q, %v", got, err)
	}
}

// BenchmarkLease measures the lease operations and what a fence adds to a
// server write, on the test binary's Postgres (loopback).
func BenchmarkLease(b *testing.B) {
	dsn := pg.Database(b)
	s, err := Open(b.Context(), dsn, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := b.Context()
	if err := s.RegisterReplica(ctx, "r1", "http://127.0.0.1:9", "v1", time.Hour); err != nil {
		b.Fatal(err)
	}
	f, ok, err := s.Claim(ctx, "chat/bench", "r1")
	if err != nil || !ok {
		b.Fatal(ok, err)
	}
	b.Run("ClaimRelease", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			f, ok, err := s.Claim(ctx, fmt.Sprintf("chat/c%d", i%100), "r1")
			if err != nil || !ok {
				b.Fatal(ok, err)
			}
			if err := s.Release(ctx, f); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Heartbeat", func(b *testing.B) {
		for b.Loop() {
			if ok, err := s.Heartbeat(ctx, "r1", time.Hour, 1); err != nil || !ok {
				b.Fatal(ok, err)
			}
		}
	})
	b.Run("Resolve", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.Resolve(ctx, "chat/bench"); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, fenced := range []bool{false, true} {
		name, wctx := "PutServer", ctx
		if fenced {
			name, wctx = "PutServerFenced", store.WithFence(ctx, f)
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if err := s.PutServer(wctx, server("chat/bench", "a", "n")); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
