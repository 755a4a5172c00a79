package cluster

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/internal/testing/oauthtest"
	"github.com/agentmcp/agentmcp/internal/testing/pgtest"
	"github.com/agentmcp/agentmcp/store"
	"github.com/agentmcp/agentmcp/store/postgres"
)

var pg = pgtest.New()

func TestMain(m *testing.M) {
	os.Exit(pg.Main(m))
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// cluster is a Postgres database with its DSN.
type cluster struct {
	dsn string
}

func newCluster(t *testing.T) *cluster { return &cluster{dsn: pg.Database(t)} }

// store opens a store on the cluster's database, closed when the test ends.
func (c *cluster) store(t *testing.T) *postgres.Store {
	st, err := postgres.Open(testCtx(t), c.dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// expire makes replica id's row expire now, as the database sees it: what
// a replica that stopped renewing looks like once its TTL has passed.
func (c *cluster) expire(t *testing.T, id string) {
	conn, err := pgx.Connect(testCtx(t), c.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(testCtx(t), `UPDATE agentmcp_replicas SET expires_at = now() - interval '1 second' WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
}

// join joins a replica whose loop never renews by itself (a long
// Interval; tests call beat and checkTrust), on a fake clock.
func join(t *testing.T, st *postgres.Store, url string, onUntrusted func()) (*Replica, *oauthtest.Clock) {
	c := oauthtest.NewClock(time.Time{})
	r, err := Join(testCtx(t), st, &Options{URL: url, TTL: 3 * time.Hour, Interval: time.Hour, Margin: time.Hour,
		OnUntrusted: onUntrusted, now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Leave(context.Background()) })
	return r, c
}

// TestOwnership: of two replicas, the one that claims an agent owns it and
// the other is told where it lives; released, it can be claimed by the
// other with a higher epoch.
func TestOwnership(t *testing.T) {
	c := newCluster(t)
	ctx := testCtx(t)
	a, _ := join(t, c.store(t), "http://127.0.0.1:1001", nil)
	b, _ := join(t, c.store(t), "http://127.0.0.1:1002", nil)
	fa, err := a.Claim(ctx, "test/x")
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Claim(ctx, "test/x")
	var owned *agent.OwnedElsewhereError
	if !errors.As(err, &owned) || owned.Owner != a.ID() || owned.URL != "http://127.0.0.1:1001" {
		t.Fatalf("claim of an owned agent: %v", err)
	}
	if err := a.Release(ctx, fa); err != nil {
		t.Fatal(err)
	}
	fb, err := b.Claim(ctx, "test/x")
	if err != nil || fb.Epoch <= fa.Epoch || fb.Replica != b.ID() {
		t.Fatalf("claim after the release: %+v %v (first %+v)", fb, err, fa)
	}
}

// TestTrust: a replica that cannot renew stops trusting its leases at its
// deadline (the gate closes, OnUntrusted runs once); renewed again before
// its row expired, it gives its leases back and trusts again; if the row
// expired, it joins again under a new id.
func TestTrust(t *testing.T) {
	c := newCluster(t)
	ctx := testCtx(t)
	st := c.store(t)
	untrusted := make(chan struct{}, 8) // a value per OnUntrusted call
	r, clk := join(t, st, "http://127.0.0.1:1001", func() { untrusted <- struct{}{} })
	calls := func(wait bool) int {
		n := 0
		if wait {
			select {
			case <-untrusted:
				n++
			case <-ctx.Done():
				t.Fatal("OnUntrusted was not called")
			}
		}
		for {
			select {
			case <-untrusted:
				n++
			default:
				return n
			}
		}
	}
	if err := r.Gate(); err != nil {
		t.Fatal(err)
	}
	claimed := r.ClaimGate() // the gate of the agent claimed next
	if err := claimed(); err != nil {
		t.Fatal(err)
	}
	f, err := r.Claim(ctx, "test/x")
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(2*time.Hour - time.Second) // TTL - Margin, less a second
	r.checkTrust()
	if err := r.Gate(); err != nil || calls(false) != 0 {
		t.Fatalf("before the deadline: gate %v, or OnUntrusted called", err)
	}
	clk.Advance(time.Second)
	r.checkTrust()
	r.checkTrust()
	if err := r.Gate(); !errors.Is(err, ErrUntrusted) {
		t.Errorf("past the deadline: gate %v", err)
	}
	if _, err := r.Claim(ctx, "test/y"); !errors.Is(err, ErrUntrusted) {
		t.Errorf("claim while untrusted: %v", err)
	}
	if n := calls(true); n != 1 {
		t.Errorf("OnUntrusted called %d times", n)
	}
	// The row has not expired (by the database's clock): a renewal
	// restores the trust, the lease given back.
	if !r.beat() {
		t.Fatal("renewal failed")
	}
	if err := r.Gate(); err != nil {
		t.Errorf("after the renewal: gate %v", err)
	}
	// The agent claimed before the lapse stays gated: it is being closed,
	// and its lease was given back.
	if err := claimed(); !errors.Is(err, ErrUntrusted) {
		t.Errorf("after the renewal: the gate of an agent claimed before the lapse: %v", err)
	}
	again := r.ClaimGate()
	if err := again(); err != nil {
		t.Errorf("after the renewal: the gate of an agent claimed now: %v", err)
	}
	if owner, err := st.Resolve(ctx, "test/x"); err != nil || owner.Replica != "" {
		t.Errorf("the lease of a distrusted replica: %+v %v", owner, err)
	}
	if _, ok, err := st.Claim(ctx, "test/x", r.ID()); err != nil || !ok {
		t.Fatal(err)
	}

	// The row expired: a new id, every old lease invalid.
	old := r.ID()
	c.expire(t, old)
	if !r.beat() || r.ID() == old {
		t.Fatalf("after its row expired: id %s (was %s)", r.ID(), old)
	}
	if n := calls(true); n != 1 {
		t.Errorf("OnUntrusted called %d more times after the row expired", n)
	}
	if err := r.Gate(); err != nil {
		t.Errorf("after joining again: gate %v", err)
	}
	if err := again(); !errors.Is(err, ErrUntrusted) {
		t.Errorf("after joining again: the gate of an agent claimed by the old id: %v", err)
	}
	if err := r.ClaimGate()(); err != nil {
		t.Errorf("after joining again: the gate of an agent claimed now: %v", err)
	}
	if err := st.UpdateServer(store.WithFence(ctx, f), "test/x", "none", func(*store.Server) error { return nil }); !errors.Is(err, store.ErrFenced) {
		t.Errorf("a write under the first lease: %v", err)
	}
}

// TestFencedAgent: two hosts on one database, each with its replica. The
// first owns an agent; once its row expires (it stopped renewing), the
// second takes the agent over, and the first's next write of the agent is
// refused as fenced, changing nothing, and closes its copy.
func TestFencedAgent(t *testing.T) {
	c := newCluster(t)
	ctx := testCtx(t)
	srv := mcptest.NewServer("s")
	s := mcptest.Serve(t, mcptest.Stateless, func() *mcp.Server { return srv.Server })
	stA, stB := c.store(t), c.store(t)
	ra, _ := join(t, stA, "http://127.0.0.1:1001", nil)
	rb, _ := join(t, stB, "http://127.0.0.1:1002", nil)
	ha := agent.NewHost(stA, &agent.HostOptions{Directory: ra, IdleTimeout: -1})
	defer ha.Close(context.Background())
	hb := agent.NewHost(stB, &agent.HostOptions{Directory: rb, IdleTimeout: -1})
	defer hb.Close(context.Background())

	a, release, err := ha.Use(ctx, "test", "x")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if _, err := a.AddMCPServer(ctx, "s", s.URL, &agent.AddOptions{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := hb.Use(ctx, "test", "x"); !errors.Is(err, agent.ErrOwnedElsewhere) {
		t.Fatalf("second host, while the first owns the agent: %v", err)
	}

	c.expire(t, ra.ID())
	b, releaseB, err := hb.Use(ctx, "test", "x")
	if err != nil {
		t.Fatalf("takeover: %v", err)
	}
	defer releaseB()
	if err := a.RemoveMCPServer(ctx, "s"); !errors.Is(err, store.ErrFenced) {
		t.Errorf("the old owner's write: %v", err)
	}
	if _, ok := b.Server("s"); !ok {
		t.Error("the fenced write removed the server")
	}
	rows, err := stB.ListServers(ctx, "test/x")
	if err != nil || len(rows) != 1 {
		t.Errorf("rows after the fenced write: %v %v", rows, err)
	}
}

// TestWatch: a watcher of an agent hears that its lease was given back
// (by another replica, through the database's notifications), watchers of
// other agents do not, and Leave wakes those still waiting.
func TestWatch(t *testing.T) {
	c := newCluster(t)
	ctx := testCtx(t)
	a, _ := join(t, c.store(t), "http://127.0.0.1:1001", nil)
	b, _ := join(t, c.store(t), "http://127.0.0.1:1002", nil)
	f, err := a.Claim(ctx, "test/x")
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-b.listening:
	case <-ctx.Done():
		t.Fatal("b never listened")
	}
	x, stopX := b.Watch("test/x")
	defer stopX()
	y, stopY := b.Watch("test/y")
	defer stopY()
	if err := a.Release(ctx, f); err != nil {
		t.Fatal(err)
	}
	select {
	case <-x:
	case <-ctx.Done():
		t.Fatal("no hint for the released agent")
	}
	select {
	case <-y:
		t.Error("a hint for an agent nobody released")
	default:
	}
	if err := b.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-y:
	default:
		t.Error("a watcher still waiting after Leave")
	}
}
