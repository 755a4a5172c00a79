package agent_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAddAgainConnects: adding a stored server again when it has no
// connection (closed with CloseConnection, or never connected in an agent
// opened Dormant) connects it, as Reconnect does: requests are made (a
// handshake, or a resumed session's first) and the server is ready, not
// reported ready while not connected.
func TestAddAgainConnects(t *testing.T) {
	ctx := testCtx(t)
	s := serve(t, mcptest.Stateful)
	st := openSQLite(t, "")
	a := openAgent(t, st, "readd", nil)
	if _, err := a.AddMCPServer(ctx, "one", s.URL, &agent.AddOptions{ID: "one"}); err != nil {
		t.Fatal(err)
	}
	check := func(what string, a *agent.Agent) {
		t.Helper()
		requests := s.requests.Load()
		res, err := a.AddMCPServer(ctx, "one", s.URL, nil)
		if err != nil || res.State != mcpclient.StateReady || res.ID != "one" {
			t.Fatalf("%s: add again: %+v, %v", what, res, err)
		}
		if s.requests.Load() == requests {
			t.Errorf("%s: add again made no request", what)
		}
		if got, _ := a.Server("one"); got.State != string(mcpclient.StateReady) {
			t.Errorf("%s: after adding again the server is %s; want ready", what, got.State)
		}
		if _, err := a.Manager().CallTool(ctx, "one", "echo", map[string]any{"text": "hi"}, nil); err != nil {
			t.Errorf("%s: a call after adding again: %v", what, err)
		}
	}

	if err := a.Manager().CloseConnection(ctx, "one"); err != nil {
		t.Fatal(err)
	}
	check("closed connection", a)
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}

	d := openAgent(t, st, "readd", &agent.Options{Dormant: true})
	check("dormant agent", d)

	// Ready already: adding again changes nothing and makes no request.
	requests := s.requests.Load()
	if res, err := d.AddMCPServer(ctx, "one", s.URL, nil); err != nil || res.State != mcpclient.StateReady {
		t.Fatalf("add a ready server again: %+v, %v", res, err)
	}
	if n := s.requests.Load() - requests; n != 0 {
		t.Errorf("adding a ready server again made %d requests; want none", n)
	}
}

// TestAddAgainWhileRetrying: adding again a server whose background retry
// is in flight (connecting, or discovering, with no restore under way)
// reports the outcome of that attempt, not ready while it is not.
func TestAddAgainWhileRetrying(t *testing.T) {
	for _, tt := range []struct {
		name  string
		block string // the method whose request the attempt waits on
		state mcpclient.State
	}{
		{"connecting", "initialize", mcpclient.StateConnecting},
		{"discovering", "tools/list", mcpclient.StateDiscovering},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, works := range []bool{false, true} {
				addAgainWhileRetrying(t, tt.block, tt.state, works)
			}
		})
	}
}

// addAgainWhileRetrying adds a server that fails, holds its next
// background attempt on a request for method, adds it again, then lets
// the attempt fail or succeed (works) and checks what the add said.
func addAgainWhileRetrying(t *testing.T, method string, state mcpclient.State, works bool) {
	ctx := testCtx(t)
	var (
		mode    atomic.Int32 // 0 answers 503, 1 holds a request for method, 2 serves
		arrived = make(chan struct{}, 1)
		release = make(chan int32)
	)
	real := mcptest.Handler(t, mcptest.Stateful, func() *mcp.Server { return mcptest.NewServer("s").Server })
	s := mcptest.ServeHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct{ Method string }
		json.Unmarshal(body, &msg)
		if mode.Load() == 1 && msg.Method == method {
			select {
			case arrived <- struct{}{}:
			default:
			}
			mode.Store(<-release)
		}
		if mode.Load() == 0 {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		real.ServeHTTP(w, r)
	}))
	a := openAgent(t, openSQLite(t, ""), "retrying", nil)
	opts := &agent.AddOptions{
		ID:        "one",
		Transport: mcpclient.TransportOptions{Type: mcpclient.TransportStreamableHTTP},
		Retry:     &mcpclient.RetryOptions{MaxAttempts: 1, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond, BackgroundMaxDelay: time.Millisecond},
	}
	if method == "tools/list" {
		mode.Store(2) // connected first, then held on the discovery of a retry
	}
	if method == "initialize" {
		if _, err := a.AddMCPServer(ctx, "one", s.URL, opts); err == nil {
			t.Fatal("the first add of a server that answers 503 succeeded")
		}
		mode.Store(1) // the next background attempt is held
	} else {
		if _, err := a.AddMCPServer(ctx, "one", s.URL, opts); err != nil {
			t.Fatal(err)
		}
		// A drop: the server forgets the session and answers 503 until
		// the background attempt that follows is held.
		mode.Store(0)
		if err := a.Manager().CloseConnection(ctx, "one"); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Reconnect(ctx, "one"); err == nil {
			t.Fatal("reconnecting to a server that answers 503 succeeded")
		}
		mode.Store(1)
	}
	select {
	case <-arrived:
	case <-ctx.Done():
		t.Fatal("no background attempt came")
	}
	if got, _ := a.Manager().Server("one"); got.State != state {
		t.Fatalf("while the background attempt is held the server is %s; want %s", got.State, state)
	}

	type outcome struct {
		res agent.AddResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := a.AddMCPServer(ctx, "one", s.URL, opts)
		done <- outcome{res, err}
	}()
	// The add either answers at once (and must then be right about the
	// attempt in flight) or waits for it: let the attempt end.
	var early *outcome
	select {
	case o := <-done:
		early = &o
	case <-time.After(100 * time.Millisecond): // no synchronisation: only lets a wrong early answer show
	}
	if works {
		release <- 2
	} else {
		release <- 0
	}
	o := early
	if o == nil {
		got := <-done
		o = &got
	}
	info, _ := a.Manager().Server("one")
	switch {
	case works && (o.err != nil || o.res.State != mcpclient.StateReady || info.State != mcpclient.StateReady):
		t.Errorf("works: add again while %s = %+v, %v; the server is then %s; want ready", state, o.res, o.err, info.State)
	case !works && o.err == nil:
		t.Errorf("fails: add again while %s = %+v, nil; the server is then %s; want the attempt's error", state, o.res, info.State)
	}
}
