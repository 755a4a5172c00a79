package mcpclient_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/internal/testing/fixture"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/internal/testing/peers"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/mcpclient/transport"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSessionExpiry: the server forgets the session. The next list
// succeeds on a new session; a repeatable call is repeated; a call that is
// not repeatable returns InterruptedCallError and did not run twice.
func TestSessionExpiry(t *testing.T) {
	srv := mcptest.NewServer("s")
	hs := mcptest.Serve(t, mcptest.Stateful, func() *mcp.Server { return srv.Server })
	m := newManager(t, nil)
	connectReady(t, m, "s1", mcpclient.ServerOptions{URL: hs.URL})
	ctx := testCtx(t)
	first, _ := m.Server("s1")

	// The next list succeeds, with one new handshake.
	if hs.ExpireSessions() == 0 {
		t.Fatal("the server handed out no session")
	}
	d, err := m.DiscoverIfConnected(ctx, "s1", nil)
	if err != nil || !d.Success {
		t.Fatalf("discovery after expiry: %+v, %v", d, err)
	}
	second, _ := m.Server("s1")
	if second.SessionID == "" || second.SessionID == first.SessionID {
		t.Errorf("session id %q after expiry, was %q", second.SessionID, first.SessionID)
	}

	// A tool that is neither read-only nor idempotent is not repeated.
	hs.ExpireSessions()
	_, err = m.CallTool(ctx, "s1", "increment", nil, nil)
	var ierr *mcpclient.InterruptedCallError
	if !errors.As(err, &ierr) || !errors.Is(err, mcpclient.ErrCallInterrupted) || !errors.Is(err, mcpclient.ErrSessionExpired) {
		t.Fatalf("increment after expiry: %v; want InterruptedCallError", err)
	}
	if ierr.Name != "increment" || ierr.ServerID != "s1" {
		t.Errorf("error fields %+v", ierr)
	}
	if n := srv.Increments.Load(); n != 0 {
		t.Errorf("increment ran %d times", n)
	}
	// The session was renewed: the next call works.
	if r, err := m.CallTool(ctx, "s1", "increment", nil, nil); err != nil || textOf(t, r) != "1" {
		t.Errorf("increment on the new session: %v", err)
	}

	// A read-only tool, a resource read and a prompt are repeated
	// transparently.
	hs.ExpireSessions()
	if r, err := m.CallTool(ctx, "s1", "echo", map[string]any{"text": "again"}, nil); err != nil || textOf(t, r) != "echo: again" {
		t.Errorf("echo after expiry: %v", err)
	}
	hs.ExpireSessions()
	if _, err := m.ReadResource(ctx, "s1", "test://static"); err != nil {
		t.Errorf("read after expiry: %v", err)
	}
	hs.ExpireSessions()
	if _, err := m.GetPrompt(ctx, "s1", "greet", map[string]string{"name": "x"}); err != nil {
		t.Errorf("prompt after expiry: %v", err)
	}
	m.WaitForConnections(ctx)
	if info, _ := m.Server("s1"); info.State != mcpclient.StateReady {
		t.Errorf("final state %s (%v)", info.State, info.Error)
	}
}

// TestReconnect: the server goes away and comes back on the same port; the
// Manager reconnects in the background within its retry budget, with every
// state change visible. The fake clock holds the backoff until the server
// is back, so the test does not depend on timing.
func TestReconnect(t *testing.T) {
	for _, era := range []struct {
		name string
		mode mcptest.Mode
	}{{"2025-11-25", mcptest.Stateful}, {"2026-07-28", mcptest.Stateless}} {
		t.Run(era.name, func(t *testing.T) {
			t.Parallel()
			newServer := func() *mcp.Server { return mcptest.NewServer("s").Server }
			hs := mcptest.Serve(t, era.mode, newServer)
			clock := fixture.NewClock()
			m := newManager(t, &mcpclient.Options{Clock: clock})
			rec := record(m)
			connectReady(t, m, "s1", mcpclient.ServerOptions{URL: hs.URL})
			ctx := testCtx(t)

			hs.Stop()
			if era.mode == mcptest.Stateless {
				// Nothing is open to notice; a call finds out.
				if _, err := m.CallTool(ctx, "s1", "echo", map[string]any{"text": "x"}, nil); err == nil {
					t.Fatal("call to a stopped server succeeded")
				}
			}
			rec.waitFor(t, "failed attempt", stateIs("s1", mcpclient.StateFailed))
			<-clock.Waiting() // the Manager is backing off
			hs.Restart()
			clock.Fire()
			rec.waitFor(t, "ready again", stateIs("s1", mcpclient.StateReady))
			m.WaitForConnections(ctx)

			states := rec.states("s1")
			i := slices.Index(states, mcpclient.StateReady) // the first ready
			want := []mcpclient.State{mcpclient.StateConnecting, mcpclient.StateFailed, mcpclient.StateConnecting,
				mcpclient.StateConnected, mcpclient.StateDiscovering, mcpclient.StateReady}
			if got := states[i+1:]; !slices.Equal(got, want) {
				t.Errorf("states after the drop: %v, want %v", got, want)
			}
			if _, err := m.CallTool(ctx, "s1", "echo", map[string]any{"text": "back"}, nil); err != nil {
				t.Errorf("call after reconnecting: %v", err)
			}
		})
	}
}

// TestReconnectProcess: a real server process is killed and started again
// on the same port.
func TestReconnectProcess(t *testing.T) {
	peers.Require(t)
	ps := peers.StartEverything(t, "streamableHttp")
	clock := fixture.NewClock()
	m := newManager(t, &mcpclient.Options{Clock: clock})
	rec := record(m)
	connectReady(t, m, "ev", mcpclient.ServerOptions{URL: ps.URL})

	ps.Stop()
	rec.waitFor(t, "failed attempt", stateIs("ev", mcpclient.StateFailed))
	<-clock.Waiting()
	ps.Restart()
	clock.Fire()
	rec.waitFor(t, "ready again", stateIs("ev", mcpclient.StateReady))
	res, err := m.CallTool(testCtx(t), "ev", "echo", map[string]any{"message": "back"}, nil)
	if err != nil || textOf(t, res) != "Echo: back" {
		t.Errorf("echo after restart: %v", err)
	}
}

// TestRetryBudget: with the server gone for good, reconnection stops after
// MaxAttempts and leaves the server failed with its error; what follows is
// the background retry (TestBackgroundRetry), not counted by
// WaitForConnections.
func TestRetryBudget(t *testing.T) {
	hs := mcptest.Serve(t, mcptest.Stateful, func() *mcp.Server { return mcptest.NewServer("s").Server })
	clock := fixture.NewClock()
	m := newManager(t, &mcpclient.Options{Clock: clock})
	rec := record(m)
	connectReady(t, m, "s1", mcpclient.ServerOptions{URL: hs.URL, Retry: &mcpclient.RetryOptions{MaxAttempts: 2}})
	hs.Stop()
	rec.waitFor(t, "first failed attempt", stateIs("s1", mcpclient.StateFailed))
	<-clock.Waiting()
	clock.Fire()
	rec.waitFor(t, "second failed attempt", stateIs("s1", mcpclient.StateFailed))
	m.WaitForConnections(testCtx(t))
	<-clock.Waiting() // the background retry
	info, _ := m.Server("s1")
	if info.State != mcpclient.StateFailed || info.Error == nil {
		t.Errorf("after the budget: %s, %v", info.State, info.Error)
	}
	if _, err := m.CallTool(testCtx(t), "s1", "echo", nil, nil); !errors.Is(err, mcpclient.ErrNotConnected) {
		t.Errorf("call on a failed server: %v", err)
	}
}

// TestComesBackByItself: the reference server, a real process, is killed
// under a connected Manager and stays down past the retry budget and
// several background attempts; once it is started again the server comes
// back ready with no call from the user. The backoff is short (the
// options a test may set); the event waits have a timeout only as a
// safety net.
func TestComesBackByItself(t *testing.T) {
	peers.Require(t)
	ps := peers.StartEverything(t, "streamableHttp")
	m := newManager(t, nil)
	rec := record(m)
	retry := &mcpclient.RetryOptions{MaxAttempts: 2, BaseDelay: 50 * time.Millisecond, MaxDelay: 200 * time.Millisecond,
		BackgroundMaxDelay: 500 * time.Millisecond}
	connectReady(t, m, "ev", mcpclient.ServerOptions{URL: ps.URL, Retry: retry})

	down := time.Now()
	ps.Stop()
	// The budget: two failed attempts. Then background attempts, each
	// failing while the server is down.
	for i := range 2 + 3 {
		rec.waitFor(t, fmt.Sprintf("failed attempt %d", i+1), stateIs("ev", mcpclient.StateFailed))
	}
	m.WaitForConnections(testCtx(t)) // the background retry is not waited for
	ps.Restart()
	rec.waitFor(t, "ready, by itself", stateIs("ev", mcpclient.StateReady))
	t.Logf("down %v: 2 attempts and 3 background attempts failed; back by itself", time.Since(down).Round(time.Millisecond))
	res, err := m.CallTool(testCtx(t), "ev", "echo", map[string]any{"message": "back"}, nil)
	if err != nil || textOf(t, res) != "Echo: back" {
		t.Errorf("echo after coming back: %v", err)
	}
}

// TestCallReconnectsProcess: with the background retry off, the reference
// server killed and started again stays failed until a tool call, which
// reconnects it first.
func TestCallReconnectsProcess(t *testing.T) {
	peers.Require(t)
	ps := peers.StartEverything(t, "streamableHttp")
	m := newManager(t, nil)
	rec := record(m)
	retry := &mcpclient.RetryOptions{MaxAttempts: 1, DisableBackground: true}
	connectReady(t, m, "ev", mcpclient.ServerOptions{URL: ps.URL, Retry: retry})
	ps.Stop()
	rec.waitFor(t, "failed", stateIs("ev", mcpclient.StateFailed))
	m.WaitForConnections(testCtx(t))
	ps.Restart()
	if info, _ := m.Server("ev"); info.State != mcpclient.StateFailed {
		t.Fatalf("before the call: %s", info.State)
	}
	res, err := m.CallTool(testCtx(t), "ev", "echo", map[string]any{"message": "again"}, nil)
	if err != nil || textOf(t, res) != "Echo: again" {
		t.Fatalf("call on the failed server: %v", err)
	}
	if info, _ := m.Server("ev"); info.State != mcpclient.StateReady {
		t.Errorf("after the call: %s (%v)", info.State, info.Error)
	}
}

// TestListenGivesUp: a 2026-07-28 server ends every subscriptions/listen
// stream at once, without a word. The connection issues the listen again
// until it gives up (transport.MaxStreamRetries in a row), then fails; the
// Manager reconnects, and list changes are heard on the new connection.
func TestListenGivesUp(t *testing.T) {
	srv := mcptest.NewServer("s")
	var listens, discovers atomic.Int32
	hs := interceptServer(t, srv, mcptest.Stateless, func(w http.ResponseWriter, method, _ string, _ json.RawMessage) bool {
		switch method {
		case "server/discover":
			discovers.Add(1)
		case "subscriptions/listen":
			// The first connection's listen and each of its re-issues
			// end at once; the next connection's stays.
			if listens.Add(1) <= 1+transport.MaxStreamRetries {
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(http.StatusOK)
				return true
			}
		}
		return false
	})
	clock := fixture.NewClock()
	m := newManager(t, &mcpclient.Options{Clock: clock})
	rec := record(m)
	connectReady(t, m, "s1", mcpclient.ServerOptions{URL: hs.URL})
	if info, _ := m.Server("s1"); info.ProtocolVersion != "2026-07-28" {
		t.Fatalf("negotiated %s", info.ProtocolVersion)
	}
	first := discovers.Load()

	rec.waitFor(t, "a new connection", stateIs("s1", mcpclient.StateConnecting))
	rec.waitFor(t, "ready again", func(ev mcpclient.Event) bool {
		return stateIs("s1", mcpclient.StateReady)(ev) && discovers.Load() > first
	})
	if n := listens.Load(); n < 1+transport.MaxStreamRetries {
		t.Errorf("%d listens before the connection gave up, want %d", n, 1+transport.MaxStreamRetries)
	}
	srv.AddTool("late")
	rec.waitFor(t, "tools/list_changed on the new connection", func(ev mcpclient.Event) bool {
		return ev.Kind == mcpclient.EventToolsChanged && ev.ServerID == "s1" &&
			slices.Contains(toolNames(m.ListTools(mcpclient.Filter{})), "s1/late")
	})
	if n := listens.Load(); n != 2+transport.MaxStreamRetries {
		t.Errorf("%d listens in all, want %d", n, 2+transport.MaxStreamRetries)
	}
}
