package mcpclient_test

import (
	"os"
	"slices"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/internal/testing/fixture"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/internal/testing/peers"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestResumedDeadNeverConnected: a restore (EstablishConnection) of a
// saved session whose server is gone never shows the server connected or
// ready, not even between the resumed handshake (which exchanges nothing)
// and its first exchange: every state from registration on is recorded.
func TestResumedDeadNeverConnected(t *testing.T) {
	hs := mcptest.Serve(t, mcptest.Stateful, func() *mcp.Server { return mcptest.NewServer("s").Server })
	ctx := testCtx(t)
	m1 := newManager(t, nil)
	connectReady(t, m1, "s1", mcpclient.ServerOptions{URL: hs.URL})
	saved := saveResume(t, m1, "s1")

	m := newManager(t, nil)
	rec := record(m)
	retry := &mcpclient.RetryOptions{MaxAttempts: 2, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond, DisableBackground: true}
	if _, err := m.RegisterServer(ctx, "s1", mcpclient.ServerOptions{URL: "http://" + fixture.RefusingAddr(t) + "/mcp", Resume: saved, Retry: retry}); err != nil {
		t.Fatal(err)
	}
	if err := m.EstablishConnection("s1"); err != nil {
		t.Fatal(err)
	}
	m.WaitForConnections(ctx)
	states := rec.states("s1")
	if slices.Contains(states, mcpclient.StateConnected) || slices.Contains(states, mcpclient.StateReady) {
		t.Errorf("states of a resumed server that is gone: %v; connected or ready is a lie", states)
	}
	if info, _ := m.Server("s1"); info.State != mcpclient.StateFailed || info.Error == nil {
		t.Errorf("final state %s (%v); want failed with the cause", info.State, info.Error)
	}
	t.Logf("states: %v", states)
}

// TestDownTenSeconds: the reference server, a real process over streamable
// HTTP, is killed under a connected Manager and kept down for 10 s of real
// time (a deliberate outage, measured from the kill); started again on the
// same port, it comes back ready by itself, with no call from the user.
// The background retry is capped at about 1 s so that the wait after the
// restart stays short. The event waits have a timeout only as a safety
// net. It takes over 10 s, so it runs only with AGENTMCP_LONG=1 (make
// test-long); TestComesBackByItself is the short version.
func TestDownTenSeconds(t *testing.T) {
	if os.Getenv("AGENTMCP_LONG") == "" {
		t.Skip("a 10 s outage: set AGENTMCP_LONG=1 (make test-long)")
	}
	const outage = 10 * time.Second
	peers.Require(t)
	ps := peers.StartEverything(t, "streamableHttp")
	m := newManager(t, nil)
	rec := record(m)
	retry := &mcpclient.RetryOptions{MaxAttempts: 3, BaseDelay: 100 * time.Millisecond, MaxDelay: 500 * time.Millisecond,
		BackgroundMaxDelay: time.Second}
	connectReady(t, m, "ev", mcpclient.ServerOptions{URL: ps.URL, Retry: retry})

	killed := time.Now()
	ps.Stop()
	rec.waitFor(t, "the first failed attempt", stateIs("ev", mcpclient.StateFailed))
	// The rest of the outage: a deliberate duration, not a synchronisation.
	time.Sleep(outage - time.Since(killed))
	failed := 0
	for _, s := range rec.states("ev") {
		if s == mcpclient.StateFailed {
			failed++
		}
	}
	if info, _ := m.Server("ev"); info.State == mcpclient.StateReady || info.State == mcpclient.StateConnected {
		t.Fatalf("%s while the server is down", info.State)
	}
	down := time.Since(killed)
	ps.Restart()
	listening := time.Now() // the process accepts connections again
	rec.waitFor(t, "ready, by itself", stateIs("ev", mcpclient.StateReady))
	back := time.Since(listening)
	t.Logf("down %v (process start %v); %d attempts failed (%d of the retry policy, then background); ready %v after it listened again, with no user action",
		down.Round(time.Millisecond), listening.Sub(killed.Add(down)).Round(time.Millisecond), failed, retry.MaxAttempts, back.Round(time.Millisecond))
	if down < outage {
		t.Errorf("down only %v", down)
	}
	res, err := m.CallTool(testCtx(t), "ev", "echo", map[string]any{"message": "back"}, nil)
	if err != nil || textOf(t, res) != "Echo: back" {
		t.Errorf("echo after coming back: %v", err)
	}
}
