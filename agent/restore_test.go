package agent_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/internal/testing/fixture"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/internal/testing/peers"
	"github.com/agentmcp/agentmcp/mcpclient"
)

// refuser listens where a server used to be and resets every connection
// once it has read its request, as a host whose server is gone would: it
// counts the POSTs that attempt to reach the server, by JSON-RPC method
// (not the 2026-07-28 subscriptions/listen stream, the counterpart of the
// legacy GET stream, which goes with a session's first request).
type refuser struct {
	mu    sync.Mutex
	posts []string
}

func refuse(t *testing.T, rawURL string) *refuser {
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	r := &refuser{}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second)) // safety net
				req, err := http.ReadRequest(bufio.NewReader(c))
				if err != nil {
					return
				}
				body, _ := io.ReadAll(req.Body)
				if req.Method == http.MethodPost && !strings.Contains(string(body), `"subscriptions/listen"`) {
					var msg struct{ Method string }
					json.Unmarshal(body, &msg)
					r.mu.Lock()
					r.posts = append(r.posts, msg.Method)
					r.mu.Unlock()
				}
				c.(*net.TCPConn).SetLinger(0) // close with a reset
			})
		}
	})
	t.Cleanup(func() {
		l.Close()
		wg.Wait()
	})
	return r
}

// restart serves c again on its port with a new server that knows none of
// the old sessions, as a restarted process would, still counting.
func (c *counting) restart(t *testing.T, mode mcptest.Mode) {
	c.RestartWith(c.handler(t, mode))
}

func (r *refuser) attempts() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.posts...)
}

// TestRestoreTellsTheTruth: after a restart (SQLite, both eras), a
// resumed session is confirmed by its first exchange. A server that is
// gone is failed once WaitForConnections returns, after exactly the
// attempts of its retry policy (counted where it used to listen), with an
// error naming the cause, and is then retried in the background; a live
// one is resumed with no handshake; a restarted one gets one fresh
// handshake (legacy era; a 2026-07-28 server has no session to lose, and
// needs none).
func TestRestoreTellsTheTruth(t *testing.T) {
	for _, era := range []struct {
		name string
		mode mcptest.Mode
	}{{"2025-11-25", mcptest.Stateful}, {"2026-07-28", mcptest.Stateless}} {
		t.Run(era.name, func(t *testing.T) {
			live, restarted, gone := serve(t, era.mode), serve(t, era.mode), serve(t, era.mode)
			path := filepath.Join(t.TempDir(), "agent.db")
			st := openSQLite(t, path)
			ctx := testCtx(t)
			a, err := agent.Open(ctx, st, "TestAgent", "truth", nil)
			if err != nil {
				t.Fatal(err)
			}
			ids := map[string]string{}
			for name, s := range map[string]*counting{"live": live, "restarted": restarted, "gone": gone} {
				res, err := a.AddMCPServer(ctx, name, s.URL, &agent.AddOptions{Retry: &mcpclient.RetryOptions{MaxAttempts: 2}})
				if err != nil {
					t.Fatal(err)
				}
				ids[name] = res.ID
			}
			if err := a.Close(ctx); err != nil {
				t.Fatal(err)
			}

			// While the agent is down: one server restarts (losing its
			// sessions), one is gone for good.
			restarted.restart(t, era.mode)
			gone.Stop()
			refused := refuse(t, gone.URL)
			liveHandshakes, restartedHandshakes := live.handshakes.Load(), restarted.handshakes.Load()

			clock := fixture.NewClock()
			a = openAgent(t, st, "truth", &agent.Options{Manager: &mcpclient.Options{Clock: clock}})
			<-clock.Waiting() // the gone server's backoff after its first attempt
			if got := refused.attempts(); len(got) != 1 {
				t.Errorf("the gone server's first attempt sent %d requests (%v), want 1", len(got), got)
			}
			clock.Fire()
			a.WaitForConnections(ctx)

			state := a.MCPServers().Servers
			if s := state[ids["live"]]; s.State != "ready" {
				t.Errorf("live server: %s (%v)", s.State, s.Error)
			}
			if n := live.handshakes.Load() - liveHandshakes; n != 0 {
				t.Errorf("the live server got %d handshakes, want 0", n)
			}
			tools := 0
			for _, tool := range a.MCPServers().Tools {
				if tool.ServerID == ids["restarted"] {
					tools++
				}
			}
			if s := state[ids["restarted"]]; s.State != "ready" || tools == 0 {
				t.Errorf("restarted server: %s (%v), %d tools", s.State, *s.Error, tools)
			}
			want := int64(1)
			if era.mode == mcptest.Stateless {
				want = 0
			}
			if n := restarted.handshakes.Load() - restartedHandshakes; n != want {
				t.Errorf("the restarted server got %d handshakes, want %d", n, want)
			}
			g := state[ids["gone"]]
			if g.State != "failed" || g.Error == nil || !strings.Contains(*g.Error, "connection reset") {
				t.Errorf("gone server: %s, error %v; want failed, naming the reset", g.State, g.Error)
			}
			// The second attempt's request may meet the connection the
			// first dialled beside its own (h1's spare), which the server
			// resets too: the transport sends it once more, on a new
			// connection, within the same attempt.
			if got := refused.attempts(); len(got) != 2 && len(got) != 3 {
				t.Errorf("the gone server was tried %d times (%v), want the 2 of its retry policy; state %s %v", len(got), got, g.State, *g.Error)
			}
			// The background retry is started once the restore is over,
			// and is not waited for by WaitForConnections: wait for it to
			// ask the clock.
			select {
			case <-clock.Waiting():
			case <-ctx.Done():
				t.Error("no background retry is waiting for the gone server")
			}
		})
	}
}

// TestRestartBothSides: the agent stops, the reference server (a real
// process) restarts and forgets its sessions, the agent opens again: the
// server is ready with its tools after exactly one fresh handshake (the
// reference server answers the old session with "400 No valid session ID
// provided", not 404). A proxy on 127.0.0.1 counts the handshakes.
func TestRestartBothSides(t *testing.T) {
	peers.Require(t)
	ps := peers.StartEverything(t, "streamableHttp")
	px, counts := mcptest.CountingProxy(t, ps.URL)
	path := filepath.Join(t.TempDir(), "agent.db")
	st := openSQLite(t, path)
	ctx := testCtx(t)
	a, err := agent.Open(ctx, st, "TestAgent", "both", nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.AddMCPServer(ctx, "everything", px.URL, nil)
	if err != nil || res.State != mcpclient.StateReady {
		t.Fatalf("AddMCPServer = %+v, %v", res, err)
	}
	old, _ := a.Manager().Server(res.ID)
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}

	ps.Restart()
	before := counts.Handshakes.Load()
	a = openAgent(t, st, "both", nil)
	a.WaitForConnections(ctx)
	info, _ := a.Manager().Server(res.ID)
	tools := len(a.Manager().ListTools(mcpclient.Filter{ServerID: []string{res.ID}}))
	if info.State != mcpclient.StateReady || tools == 0 || info.SessionID == old.SessionID {
		t.Errorf("after both restarted: %s (%v), %d tools, session %q (old %q)", info.State, info.Error, tools, info.SessionID, old.SessionID)
	}
	if n := counts.Handshakes.Load() - before; n != 1 {
		t.Errorf("%d handshakes, want 1", n)
	}
	if counts.Rejected.Load() == 0 {
		t.Error("the reference server never answered the old session with a 400: the test no longer tests that")
	}
	out, err := a.Manager().CallTool(ctx, res.ID, "echo", map[string]any{"message": "both"}, nil)
	if err != nil || len(out.Content) == 0 {
		t.Errorf("echo: %v", err)
	}
}
