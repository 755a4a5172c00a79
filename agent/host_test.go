package agent_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/internal/testing/oauthtest"
	"github.com/agentmcp/agentmcp/oauth"
	"github.com/agentmcp/agentmcp/store"
	"github.com/agentmcp/agentmcp/store/postgres"
)

// newHost returns a host on st with a fake clock, closed when the test
// ends.
func newHost(t *testing.T, st store.Store, opts *agent.HostOptions) (*agent.Host, *oauthtest.Clock) {
	t.Helper()
	if opts == nil {
		opts = &agent.HostOptions{}
	}
	if opts.IdleTimeout == 0 {
		opts.IdleTimeout = time.Hour // the ticker never fires: Sweep does
	}
	h := agent.NewHost(st, opts)
	clock := oauthtest.NewClock(time.Time{})
	agent.SetHostClock(h, clock.Now)
	t.Cleanup(func() { h.Close(context.Background()) })
	return h, clock
}

// use wakes an agent of h and returns it with its release.
func use(t *testing.T, h *agent.Host, name string) (*agent.Agent, func()) {
	t.Helper()
	a, release, err := h.Use(testCtx(t), "test-agent", name)
	if err != nil {
		t.Fatal(err)
	}
	return a, release
}

// callEcho calls the echo tool of server id.
func callEcho(t *testing.T, a *agent.Agent, id string) {
	t.Helper()
	res, err := a.CallTool(testCtx(t), id, "echo", map[string]any{"text": "x"}, nil)
	if err != nil || res.IsError {
		t.Fatalf("echo on %s: %+v %v", id, res, err)
	}
}

// TestHostSingleFlight: concurrent uses of a sleeping agent open it once
// and share it.
func TestHostSingleFlight(t *testing.T) {
	h, _ := newHost(t, openSQLite(t, ""), nil)
	const n = 20
	agents := make(chan *agent.Agent, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			a, release := use(t, h, "one")
			agents <- a
			release()
		})
	}
	wg.Wait()
	close(agents)
	first := <-agents
	for a := range agents {
		if a != first {
			t.Fatal("two uses got two agents")
		}
	}
	if s := h.Stats(); s.Wakes != 1 || s.Awake != 1 {
		t.Errorf("stats %+v, want one wake", s)
	}
}

// TestHostWake, on SQLite and Postgres: an idle agent is hibernated with
// its sessions kept, and the next use wakes it from the store with no
// handshake (a saved legacy session, a stateless 2026-07-28 one), a server
// waiting for OAuth still waiting and untouched; a stale session costs
// exactly one handshake; a keep-awake server's agent is woken on Start and
// never hibernated.
func TestHostWake(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			var st store.Store
			switch backend {
			case "sqlite":
				st = openSQLite(t, filepath.Join(t.TempDir(), "agent.db"))
			case "postgres":
				var err error
				st, err = postgres.Open(testCtx(t), pg.Database(t), nil)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { st.Close() })
			}
			ctx := testCtx(t)
			modern, legacy, pending := serve(t, mcptest.Stateless), serve(t, mcptest.Stateful), serve(t, mcptest.Stateful)
			h, clock := newHost(t, st, nil)
			a, release := use(t, h, "sleeper")
			for id, s := range map[string]*counting{"modern": modern, "legacy": legacy} {
				if _, err := a.AddMCPServer(ctx, id, s.URL, &agent.AddOptions{ID: id}); err != nil {
					t.Fatal(err)
				}
			}
			authURL := "https://auth.example.com/authorize?state=abc"
			if err := st.PutServer(ctx, store.Server{Namespace: a.Namespace(), ID: "pending", Name: "pending", URL: pending.URL,
				CallbackURL: "https://agents.example.com/agents/test-agent/sleeper/callback", AuthURL: authURL}); err != nil {
				t.Fatal(err)
			}
			callEcho(t, a, "modern")
			callEcho(t, a, "legacy")
			release()

			// Not idle long enough: still awake.
			clock.Advance(agent.DefaultIdleTimeout)
			agent.Sweep(h)
			if got := h.Awake(); len(got) != 1 {
				t.Fatalf("awake before the idle timeout: %v", got)
			}
			clock.Advance(time.Hour)
			agent.Sweep(h)
			if got := h.Awake(); len(got) != 0 {
				t.Fatalf("awake after the idle timeout: %v", got)
			}
			if s := h.Stats(); s.Hibernations != 1 {
				t.Fatalf("stats %+v", s)
			}

			handshakes := modern.handshakes.Load() + legacy.handshakes.Load()
			pendingRequests := pending.requests.Load()
			a, release = use(t, h, "sleeper")
			callEcho(t, a, "modern")
			callEcho(t, a, "legacy")
			if n := modern.handshakes.Load() + legacy.handshakes.Load() - handshakes; n != 0 {
				t.Errorf("%d handshakes to wake; want none (sessions resumed)", n)
			}
			a.WaitForConnections(ctx)
			state := a.MCPServers()
			if s := state.Servers["pending"]; s.State != "authenticating" || s.AuthURL == nil || *s.AuthURL != authURL {
				t.Errorf("the server waiting for OAuth after the wake: %+v", s)
			}
			if n := pending.requests.Load() - pendingRequests; n != 0 {
				t.Errorf("the server waiting for OAuth got %d requests", n)
			}
			release()

			// A session the server forgot while the agent slept: one
			// handshake.
			if !h.Hibernate(ctx, "test-agent", "sleeper") {
				t.Fatal("Hibernate refused an idle agent")
			}
			legacy.ExpireSessions()
			handshakes = legacy.handshakes.Load()
			a, release = use(t, h, "sleeper")
			// Once restored, the catalog says echo is read-only: a call the
			// stale session loses is repeated on the new one.
			a.WaitRestored(ctx)
			callEcho(t, a, "legacy")
			if n := legacy.handshakes.Load() - handshakes; n != 1 {
				t.Errorf("%d handshakes after a stale session; want 1", n)
			}

			// Keep-awake: never hibernated, and woken by Start.
			if err := a.SetKeepAwake(ctx, "modern", true); err != nil {
				t.Fatal(err)
			}
			release()
			clock.Advance(time.Hour)
			agent.Sweep(h)
			if h.Hibernate(ctx, "test-agent", "sleeper") || len(h.Awake()) != 1 {
				t.Fatalf("a keep-awake agent was hibernated (awake: %v)", h.Awake())
			}
			h.Close(ctx)
			h2, _ := newHost(t, st, nil)
			if err := h2.Start(ctx); err != nil {
				t.Fatal(err)
			}
			if got := h2.Awake(); len(got) != 1 || got[0] != "test-agent/sleeper" {
				t.Errorf("awake after Start: %v", got)
			}
		})
	}
}

// TestHostBusy: a use not released, an open watch, a pending elicitation
// and an OAuth flow in progress each keep an agent awake; once they end,
// it sleeps.
func TestHostBusy(t *testing.T) {
	ctx := testCtx(t)
	st := openSQLite(t, "")
	h, clock := newHost(t, st, &agent.HostOptions{Agent: &agent.Options{ElicitationTimeout: time.Hour}})
	idle := func() bool {
		clock.Advance(2 * time.Hour)
		agent.Sweep(h)
		return len(h.Awake()) == 0
	}

	a, release := use(t, h, "busy")
	if idle() {
		t.Fatal("an agent in use was hibernated")
	}
	w := a.Watch(0)
	release()
	if idle() {
		t.Fatal("a watched agent was hibernated")
	}
	w.Stop()
	if !idle() {
		t.Fatal("an idle agent stayed awake")
	}

	// A pending elicitation.
	asker := mcptest.NewServer("asker")
	mcp.AddTool(asker.Server, &mcp.Tool{Name: "ask"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "name?", RequestedSchema: map[string]any{"type": "object",
			"properties": map[string]any{"name": map[string]any{"type": "string"}}}})
		if err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Action}}}, nil, nil
	})
	srv := mcptest.Serve(t, mcptest.Stateful, func() *mcp.Server { return asker.Server })
	a, release = use(t, h, "busy")
	if _, err := a.AddMCPServer(ctx, "asker", srv.URL, &agent.AddOptions{ID: "asker"}); err != nil {
		t.Fatal(err)
	}
	w = a.Watch(0)
	called := make(chan error, 1)
	go func() {
		_, err := a.CallTool(ctx, "asker", "ask", nil, nil)
		called <- err
	}()
	release()
	var pending []agent.Elicitation
	for pending == nil {
		select {
		case up := <-w.Updates():
			if len(up.Elicitations) > 0 {
				pending = up.Elicitations
			}
		case <-ctx.Done():
			t.Fatal("no pending elicitation")
		}
	}
	w.Stop()
	// The call in flight keeps it awake too; once the call is over, only
	// the elicitation would, so answer it only after the check.
	if idle() {
		t.Fatal("an agent with a pending elicitation was hibernated")
	}
	if !a.AnswerElicitation(pending[0].ID, &mcp.ElicitResult{Action: "decline"}) {
		t.Fatal("the elicitation was not pending")
	}
	if err := <-called; err != nil {
		t.Fatal(err)
	}
	if !idle() {
		t.Fatal("the agent stayed awake after its elicitation was answered")
	}

	// An OAuth flow in progress, until its state can no longer be
	// redeemed.
	as := oauthtest.NewServer(t, nil)
	protected := as.ServeMCP(t, mcptest.Handler(t, mcptest.Stateless, func() *mcp.Server { return mcptest.NewServer("private").Server }), nil)
	a, release = use(t, h, "busy")
	res, err := a.AddMCPServer(ctx, "private", protected.URL, &agent.AddOptions{ID: "private", CallbackHost: "http://127.0.0.1:9"})
	if err != nil || res.AuthURL == "" {
		t.Fatalf("add: %+v %v", res, err)
	}
	release()
	clock.Advance(oauth.StateLifetime - time.Minute)
	agent.Sweep(h)
	if len(h.Awake()) == 0 {
		t.Fatal("an agent was hibernated during its OAuth flow")
	}
	if !idle() {
		t.Fatal("the agent stayed awake after its OAuth state expired")
	}
}

// TestHostCap: with MaxAwake, waking one more agent hibernates the least
// recently used idle one; agents in use are kept, over the cap if need be.
func TestHostCap(t *testing.T) {
	h, clock := newHost(t, openSQLite(t, ""), &agent.HostOptions{MaxAwake: 3})
	for i := range 10 {
		clock.Advance(time.Second)
		_, release := use(t, h, fmt.Sprint("a", i))
		release()
		agent.WaitAsleep(h)
		if n := len(h.Awake()); n > 3 {
			t.Fatalf("%d agents awake with MaxAwake 3", n)
		}
	}
	want := []string{"test-agent/a7", "test-agent/a8", "test-agent/a9"}
	if got := h.Awake(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("awake %v, want the most recently used %v", got, want)
	}
	// Four held at once: the cap gives way, then comes back.
	var releases []func()
	for i := range 4 {
		_, release := use(t, h, fmt.Sprint("held", i))
		releases = append(releases, release)
	}
	agent.WaitAsleep(h)
	if n := len(h.Awake()); n != 4 {
		t.Errorf("%d agents awake with 4 in use; want 4", n)
	}
	for _, release := range releases {
		release()
	}
	agent.WaitAsleep(h)
	if n := len(h.Awake()); n != 3 {
		t.Errorf("%d agents awake once released; want 3", n)
	}
	if s := h.Stats(); s.MaxAwakeSeen != 4 {
		t.Errorf("stats %+v", s)
	}
}

// TestHostCycles: 1,000 wakes and hibernations of an agent with a server
// leave no goroutine behind, write nothing to the store and send no
// handshake.
func TestHostCycles(t *testing.T) {
	// A thousand cycles take seconds alone and more than a minute on a
	// loaded 2-core machine: testCtx's safety net is too short here.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s := serve(t, mcptest.Stateless)
	st := openSQLite(t, "")
	h, _ := newHost(t, st, nil)
	a, release := use(t, h, "cycler")
	if _, err := a.AddMCPServer(ctx, "s", s.URL, &agent.AddOptions{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	release()
	if !h.Hibernate(ctx, "test-agent", "cycler") {
		t.Fatal("not hibernated")
	}
	row, err := st.GetServer(ctx, "test-agent/cycler", "s")
	if err != nil {
		t.Fatal(err)
	}
	before := goleak.IgnoreCurrent() // the server's, the store's, the host's
	const cycles = 1000
	for i := range cycles {
		a, release := use(t, h, "cycler")
		if i%100 == 0 {
			callEcho(t, a, "s")
		}
		release()
		if !h.Hibernate(ctx, "test-agent", "cycler") {
			t.Fatalf("cycle %d: not hibernated", i)
		}
	}
	if s := h.Stats(); s.Wakes != cycles+1 || s.Hibernations != cycles+1 {
		t.Errorf("stats %+v", s)
	}
	if err := goleak.Find(before); err != nil {
		t.Error(err)
	}
	// Nothing already stored was written again.
	if after, err := st.GetServer(ctx, "test-agent/cycler", "s"); err != nil || !after.UpdatedAt.Equal(row.UpdatedAt) {
		t.Errorf("the row was written during the cycles: updated %v, then %v (%v)", row.UpdatedAt, after.UpdatedAt, err)
	}
	if n := s.handshakes.Load(); n != 1 {
		t.Errorf("%d handshakes in %d wakes; want the first only", n, cycles)
	}
}
