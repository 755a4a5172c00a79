package mcpclient_test

import (
	"context"
	"errors"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/internal/testing/fixture"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// failedServer returns a Manager with server "s1" registered on hs, which
// is stopped: its connection fails retry.MaxAttempts times (the clock's
// backoff fired between them) and the server is left failed.
func failedServer(t *testing.T, hs *mcptest.HTTPServer, retry *mcpclient.RetryOptions, clock *fixture.Clock) (*mcpclient.Manager, *recorder) {
	t.Helper()
	m := newManager(t, &mcpclient.Options{Clock: clock})
	rec := record(m)
	ctx := testCtx(t)
	hs.Stop()
	if _, err := m.RegisterServer(ctx, "s1", mcpclient.ServerOptions{URL: hs.URL, Retry: retry}); err != nil {
		t.Fatal(err)
	}
	if err := m.EstablishConnection("s1"); err != nil {
		t.Fatal(err)
	}
	for k := 1; ; k++ {
		rec.waitFor(t, "a failed attempt", stateIs("s1", mcpclient.StateFailed))
		if k == retry.MaxAttempts {
			break
		}
		<-clock.Waiting()
		clock.Fire()
	}
	m.WaitForConnections(ctx)
	if info, _ := m.Server("s1"); info.State != mcpclient.StateFailed || info.Error == nil {
		t.Fatalf("with the server stopped: %s, %v", info.State, info.Error)
	}
	return m, rec
}

func statefulServer(t *testing.T) *mcptest.HTTPServer {
	return mcptest.Serve(t, mcptest.Stateful, func() *mcp.Server { return mcptest.NewServer("s").Server })
}

// TestManagerReconnect: Reconnect brings a failed server back at once,
// replaces the session of a ready one with a fresh handshake, and reports
// the failure of a server that is still down.
func TestManagerReconnect(t *testing.T) {
	hs, handshakes := countingServer(t, mcptest.Stateful)
	ctx := testCtx(t)
	m, _ := failedServer(t, hs, &mcpclient.RetryOptions{MaxAttempts: 1, DisableBackground: true}, fixture.NewClock())

	res, err := m.Reconnect(ctx, "s1")
	if err != nil || res.State != mcpclient.StateFailed || res.Err == nil {
		t.Fatalf("Reconnect with the server down = %+v, %v; want failed with its error", res, err)
	}
	hs.RestartWith(countingHandler(t, mcptest.Stateful, handshakes))
	res, err = m.Reconnect(ctx, "s1")
	if err != nil || res.State != mcpclient.StateReady || res.Err != nil {
		t.Fatalf("Reconnect with the server back = %+v, %v; want ready", res, err)
	}
	first, _ := m.Server("s1")

	// On a ready server: a fresh session, with one handshake.
	before := handshakes.Load()
	if res, err = m.Reconnect(ctx, "s1"); err != nil || res.State != mcpclient.StateReady {
		t.Fatalf("Reconnect of a ready server = %+v, %v", res, err)
	}
	if n := handshakes.Load() - before; n != 1 {
		t.Errorf("%d handshakes, want 1", n)
	}
	second, _ := m.Server("s1")
	if second.SessionID == "" || second.SessionID == first.SessionID {
		t.Errorf("session %q after Reconnect, was %q", second.SessionID, first.SessionID)
	}
	if _, err := m.CallTool(ctx, "s1", "echo", map[string]any{"text": "x"}, nil); err != nil {
		t.Errorf("call after Reconnect: %v", err)
	}
	if _, err := m.Reconnect(ctx, "nosuch"); !errors.Is(err, mcpclient.ErrNotRegistered) {
		t.Errorf("Reconnect(nosuch) = %v", err)
	}
}

// TestCallReconnectsFailed: a tool call, a read, a prompt and a discovery
// on a failed server each try one reconnection first.
func TestCallReconnectsFailed(t *testing.T) {
	ctx := testCtx(t)
	for _, op := range []struct {
		name string
		do   func(m *mcpclient.Manager) error
	}{
		{"call", func(m *mcpclient.Manager) error {
			_, err := m.CallTool(ctx, "s1", "echo", map[string]any{"text": "x"}, nil)
			return err
		}},
		{"read", func(m *mcpclient.Manager) error { _, err := m.ReadResource(ctx, "s1", "test://static"); return err }},
		{"prompt", func(m *mcpclient.Manager) error {
			_, err := m.GetPrompt(ctx, "s1", "greet", map[string]string{"name": "x"})
			return err
		}},
		{"discover", func(m *mcpclient.Manager) error {
			d, err := m.DiscoverIfConnected(ctx, "s1", nil)
			if err == nil && !d.Success {
				err = d.Err
			}
			return err
		}},
	} {
		t.Run(op.name, func(t *testing.T) {
			hs := statefulServer(t)
			m, _ := failedServer(t, hs, &mcpclient.RetryOptions{MaxAttempts: 1, DisableBackground: true}, fixture.NewClock())
			// Still down: the attempt fails, and says so.
			if err := op.do(m); err == nil || (op.name != "discover" && !errors.Is(err, mcpclient.ErrNotConnected)) {
				t.Fatalf("%s with the server down: %v", op.name, err)
			}
			hs.Restart()
			if err := op.do(m); err != nil {
				t.Fatalf("%s with the server back: %v", op.name, err)
			}
			if info, _ := m.Server("s1"); info.State != mcpclient.StateReady {
				t.Errorf("after the %s: %s (%v)", op.name, info.State, info.Error)
			}
		})
	}
}

// TestBackgroundRetry: once its attempts are spent the server is failed,
// WaitForConnections returns, and the server keeps being retried in the
// background until it is back; without the background retry it is not.
func TestBackgroundRetry(t *testing.T) {
	hs := statefulServer(t)
	clock := fixture.NewClock()
	m, rec := failedServer(t, hs, &mcpclient.RetryOptions{MaxAttempts: 2}, clock)
	<-clock.Waiting() // the background retry, waiting
	// Two background attempts fail; the server stays failed.
	for range 2 {
		clock.Fire()
		rec.waitFor(t, "a background attempt", stateIs("s1", mcpclient.StateConnecting))
		rec.waitFor(t, "its failure", stateIs("s1", mcpclient.StateFailed))
		<-clock.Waiting()
	}
	m.WaitForConnections(testCtx(t))
	hs.Restart()
	clock.Fire()
	rec.waitFor(t, "ready, by itself", stateIs("s1", mcpclient.StateReady))
	if _, err := m.CallTool(testCtx(t), "s1", "echo", map[string]any{"text": "x"}, nil); err != nil {
		t.Errorf("call after the background retry: %v", err)
	}

	// Turned off: nothing is scheduled after the attempts.
	hs2 := statefulServer(t)
	clock2 := fixture.NewClock()
	m2, _ := failedServer(t, hs2, &mcpclient.RetryOptions{MaxAttempts: 1, DisableBackground: true}, clock2)
	// Close waits for the background work, and a background retry asks
	// the clock before it sees the close: after Close, a retry that was
	// scheduled has shown up on the clock.
	if err := m2.Close(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-clock2.Waiting():
		t.Error("a background retry was scheduled although it is disabled")
	default:
	}
}

// TestRetryValidation: the background fields are checked.
func TestRetryValidation(t *testing.T) {
	m := newManager(t, nil)
	_, err := m.RegisterServer(testCtx(t), "s", mcpclient.ServerOptions{URL: "http://127.0.0.1:1/mcp",
		Retry: &mcpclient.RetryOptions{BackgroundMaxDelay: -time.Second}})
	if err == nil {
		t.Error("a negative BackgroundMaxDelay was accepted")
	}
}

// blackHole accepts connections on 127.0.0.1 and never answers, as a
// server that hangs would; accepted tells of each connection.
func blackHole(t *testing.T) (url string, accepted chan struct{}) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted = make(chan struct{}, 100)
	done := make(chan struct{})
	var conns []net.Conn
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
			accepted <- struct{}{}
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + l.Addr().String() + "/mcp", accepted
}

// TestCloseCancelsConnect: closing a server cancels its connect in flight
// at once (a handshake that hangs, a retry waiting for its backoff), and
// the cancelled connect never brings the server back.
func TestCloseCancelsConnect(t *testing.T) {
	for _, closeAll := range []bool{false, true} {
		name := "CloseConnection"
		if closeAll {
			name = "CloseAllConnections"
		}
		t.Run(name, func(t *testing.T) {
			url, accepted := blackHole(t)
			m := newManager(t, nil) // the default 30 s connect timeout
			rec := record(m)
			ctx := testCtx(t)
			m.RegisterServer(ctx, "s1", mcpclient.ServerOptions{URL: url})
			m.EstablishConnection("s1")
			<-accepted // the handshake is in flight
			if closeAll {
				m.CloseAllConnections(ctx)
			} else {
				m.CloseConnection(ctx, "s1")
			}
			wait, cancel := context.WithTimeout(ctx, 10*time.Second) // safety net
			defer cancel()
			m.WaitForConnections(wait)
			if wait.Err() != nil {
				t.Fatal("WaitForConnections waited for the cancelled connect")
			}
			states := rec.states("s1")
			if got := states[len(states)-1]; got != mcpclient.StateNotConnected {
				t.Errorf("states %v: want not-connected last", states)
			}
			if slices.Contains(states, mcpclient.StateFailed) {
				t.Errorf("states %v: the cancelled connect reported a failure", states)
			}
		})
	}

	// A retry waiting for its backoff.
	hs := statefulServer(t)
	hs.Stop()
	clock := fixture.NewClock()
	m := newManager(t, &mcpclient.Options{Clock: clock})
	rec := record(m)
	m.RegisterServer(testCtx(t), "s1", mcpclient.ServerOptions{URL: hs.URL, Retry: &mcpclient.RetryOptions{MaxAttempts: 3}})
	m.EstablishConnection("s1")
	rec.waitFor(t, "the first attempt failing", stateIs("s1", mcpclient.StateFailed))
	<-clock.Waiting()
	m.CloseConnection(testCtx(t), "s1") // while the second attempt waits
	hs.Restart()
	clock.Fire()
	m.WaitForConnections(testCtx(t))
	if info, _ := m.Server("s1"); info.State != mcpclient.StateNotConnected {
		t.Errorf("after closing during the backoff: %s", info.State)
	}
	// The explicit way back still works.
	if res, err := m.Reconnect(testCtx(t), "s1"); err != nil || res.State != mcpclient.StateReady {
		t.Errorf("Reconnect after close: %+v, %v", res, err)
	}
}

// TestBackgroundRetryAfterConnect: a server whose single connection
// attempt (ConnectToServer, as AddMCPServer makes) fails is retried in the
// background too.
func TestBackgroundRetryAfterConnect(t *testing.T) {
	hs := statefulServer(t)
	hs.Stop()
	clock := fixture.NewClock()
	m := newManager(t, &mcpclient.Options{Clock: clock})
	rec := record(m)
	ctx := testCtx(t)
	m.RegisterServer(ctx, "s1", mcpclient.ServerOptions{URL: hs.URL})
	if res, _ := m.ConnectToServer(ctx, "s1"); res.State != mcpclient.StateFailed {
		t.Fatalf("ConnectToServer with the server down: %+v", res)
	}
	<-clock.Waiting() // the background retry
	hs.Restart()
	clock.Fire()
	rec.waitFor(t, "ready, by itself", stateIs("s1", mcpclient.StateReady))
}

// TestNextRetryAt: a failed server waiting for its next attempt says when
// it is due (ServerInfo.NextRetryAt, by the Manager's clock), announced by
// an EventRetryScheduled, for the retries after a failed connect and for
// the background retry; the time is cleared once the attempt starts and
// after the server is back.
func TestNextRetryAt(t *testing.T) {
	hs := statefulServer(t)
	hs.Stop()
	clock := fixture.NewClock()
	m := newManager(t, &mcpclient.Options{Clock: clock})
	rec := record(m)
	ctx := testCtx(t)
	retry := &mcpclient.RetryOptions{MaxAttempts: 2, BaseDelay: time.Second, MaxDelay: 4 * time.Second, BackgroundMaxDelay: time.Minute}
	if _, err := m.RegisterServer(ctx, "s1", mcpclient.ServerOptions{URL: hs.URL, Retry: retry}); err != nil {
		t.Fatal(err)
	}
	if err := m.EstablishConnection("s1"); err != nil {
		t.Fatal(err)
	}
	retried := func(ev mcpclient.Event) bool {
		return ev.ServerID == "s1" && ev.Kind == mcpclient.EventRetryScheduled && ev.State == mcpclient.StateFailed && ev.Err != nil
	}
	now := clock.Now()
	check := func(what string, lo, hi time.Duration) {
		t.Helper()
		info, _ := m.Server("s1")
		if info.State != mcpclient.StateFailed || info.NextRetryAt.Before(now.Add(lo)) || info.NextRetryAt.After(now.Add(hi)) {
			t.Fatalf("%s: %s, next retry at %v; want failed, due between %v and %v from now", what, info.State, info.NextRetryAt, lo, hi)
		}
	}

	// The first attempt failed: the second waits its backoff (full jitter
	// of twice BaseDelay).
	rec.waitFor(t, "the first retry scheduled", retried)
	<-clock.Waiting()
	check("waiting for the second attempt", 0, 2*time.Second)
	clock.Fire()
	rec.waitFor(t, "the second attempt starting", stateIs("s1", mcpclient.StateConnecting))
	// Between the events the attempt is under way: nothing is due.
	rec.waitFor(t, "the second attempt failing", stateIs("s1", mcpclient.StateFailed))

	// The attempts are spent: the background retry waits (equal jitter of
	// 4 s: doubled on from where the attempts left it).
	rec.waitFor(t, "the background retry scheduled", retried)
	<-clock.Waiting()
	check("waiting for the background retry", 2*time.Second, 4*time.Second)

	hs.Restart()
	clock.Fire()
	rec.waitFor(t, "ready, by itself", stateIs("s1", mcpclient.StateReady))
	if info, _ := m.Server("s1"); !info.NextRetryAt.IsZero() {
		t.Errorf("ready, yet a retry is due at %v", info.NextRetryAt)
	}
}
