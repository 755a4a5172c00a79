package agent_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/internal/testing/fixture"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/internal/testing/oauthtest"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestReconnect: Reconnect, and adding a failed server again, retry it at
// once; neither drops the server's OAuth data.
func TestReconnect(t *testing.T) {
	hs := mcptest.Serve(t, mcptest.Stateful, func() *mcp.Server { return mcptest.NewServer("s").Server })
	st := openSQLite(t, "")
	a := openAgent(t, st, "reconnect", nil)
	ctx := testCtx(t)
	opts := &agent.AddOptions{Retry: &mcpclient.RetryOptions{MaxAttempts: 1, DisableBackground: true}}
	res, err := a.AddMCPServer(ctx, "S", hs.URL, opts)
	if err != nil || res.State != mcpclient.StateReady {
		t.Fatalf("AddMCPServer = %+v, %v", res, err)
	}
	// OAuth data (a token, a client registration) must survive all this.
	if err := st.KVPut(ctx, a.Namespace(), res.ID, "token", []byte("grant"), time.Time{}); err != nil {
		t.Fatal(err)
	}

	hs.Stop()
	if _, err := a.Reconnect(ctx, res.ID); err == nil {
		t.Fatal("Reconnect with the server down succeeded")
	}
	if s := a.MCPServers().Servers[res.ID]; s.State != "failed" || s.Error == nil {
		t.Fatalf("after a failed Reconnect: %+v", s)
	}
	if _, err := a.AddMCPServer(ctx, "S", hs.URL, opts); err == nil {
		t.Fatal("adding the failed server again with it still down succeeded")
	}

	// Adding it again once it is back retries it.
	hs.Restart()
	again, err := a.AddMCPServer(ctx, "S", hs.URL, opts)
	if err != nil || again != res {
		t.Fatalf("adding the failed server again = %+v, %v; want %+v", again, err, res)
	}
	if s := a.MCPServers().Servers[res.ID]; s.State != "ready" {
		t.Errorf("after adding it again: %+v", s)
	}

	// And so does Reconnect.
	hs.Stop()
	a.Reconnect(ctx, res.ID)
	hs.Restart()
	if r, err := a.Reconnect(ctx, res.ID); err != nil || r != res {
		t.Fatalf("Reconnect with the server back = %+v, %v", r, err)
	}
	if _, err := a.Manager().CallTool(ctx, res.ID, "echo", map[string]any{"text": "x"}, nil); err != nil {
		t.Errorf("call after Reconnect: %v", err)
	}
	if v, err := st.KVGet(ctx, a.Namespace(), res.ID, "token"); err != nil || string(v) != "grant" {
		t.Errorf("OAuth data after the reconnections: %q, %v", v, err)
	}
	if _, err := a.Reconnect(ctx, "nosuch"); !errors.Is(err, mcpclient.ErrNotRegistered) {
		t.Errorf("Reconnect(nosuch) = %v", err)
	}
	if _, err := st.GetServer(ctx, a.Namespace(), res.ID); errors.Is(err, store.ErrNotFound) {
		t.Error("the row is gone")
	}
}

// TestReconnectKeepsOAuth: a server that was authorised, goes down and
// fails, is brought back by Reconnect and by adding it again with the
// tokens it had: no new authorisation.
func TestReconnectKeepsOAuth(t *testing.T) {
	var down atomic.Bool
	e := &oauthEnv{t: t, clock: oauthtest.NewClock(time.Time{}), srv: mcptest.NewServer("protected")}
	e.as = oauthtest.NewServer(t, &oauthtest.Options{Now: e.clock.Now})
	real := mcptest.Handler(t, mcptest.Stateful, func() *mcp.Server { return e.srv.Server })
	e.res = e.as.ServeMCP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
			return
		}
		real.ServeHTTP(w, r)
	}), nil)
	e.path = filepath.Join(t.TempDir(), "agent.db")
	e.open()
	r := e.add("Protected")
	e.authorize(r)
	ctx := testCtx(t)

	down.Store(true)
	if _, err := e.a.Reconnect(ctx, r.ID); err == nil {
		t.Fatal("Reconnect with the server down succeeded")
	}
	if s := e.state(r.ID); s.State != "failed" {
		t.Fatalf("with the server down: %+v", s)
	}
	down.Store(false)
	if got, err := e.a.Reconnect(ctx, r.ID); err != nil || got.State != mcpclient.StateReady || got.AuthURL != "" {
		t.Fatalf("Reconnect = %+v, %v; want ready with the tokens it had", got, err)
	}

	down.Store(true)
	e.a.Reconnect(ctx, r.ID)
	down.Store(false)
	if got, err := e.a.AddMCPServer(ctx, "Protected", e.res.URL, nil); err != nil || got.State != mcpclient.StateReady {
		t.Fatalf("adding the failed server again = %+v, %v; want ready", got, err)
	}
	if _, err := e.a.Manager().CallTool(ctx, r.ID, "echo", map[string]any{"text": "still authorised"}, nil); err != nil {
		t.Errorf("call: %v", err)
	}
}

// TestNextRetryShown: a failed server waiting for its background retry
// says when it is due, in MCPServers, in Server, to watchers and in the
// state's JSON ("nextRetryAt"); the server's session and implementation
// are there once it is back.
func TestNextRetryShown(t *testing.T) {
	hs := mcptest.Serve(t, mcptest.Stateful, func() *mcp.Server { return mcptest.NewServer("s").Server })
	hs.Stop()
	clock := fixture.NewClock()
	a := openAgent(t, openSQLite(t, ""), "retry", &agent.Options{Manager: &mcpclient.Options{Clock: clock}})
	ctx := testCtx(t)
	w := a.Watch(64)
	defer w.Stop()
	retry := &mcpclient.RetryOptions{MaxAttempts: 1, BaseDelay: time.Second, BackgroundMaxDelay: 30 * time.Second}
	res, err := a.AddMCPServer(ctx, "S", hs.URL, &agent.AddOptions{ID: "s", Retry: retry})
	if err == nil {
		t.Fatalf("AddMCPServer with the server down = %+v", res)
	}
	<-clock.Waiting() // the background retry
	want := clock.Now().UTC()
	next := func() agent.Update {
		t.Helper()
		select {
		case u := <-w.Updates():
			return u
		case <-w.Done():
			t.Fatalf("the watch ended: %v", w.Err())
		case <-ctx.Done():
			t.Fatal("no update")
		}
		return agent.Update{}
	}
	for {
		u := next()
		if u.State == nil {
			continue
		}
		if s := u.State.Servers["s"]; s.NextRetryAt != nil {
			if s.State != "failed" || s.NextRetryAt.Before(want.Add(time.Second)) || s.NextRetryAt.After(want.Add(2*time.Second)) {
				t.Fatalf("watched: %s, next retry at %v; want failed, due in 1-2 s from %v", s.State, s.NextRetryAt, want)
			}
			break
		}
	}
	s, _ := a.Server("s")
	if s.NextRetryAt == nil {
		t.Fatal("Server: no next retry")
	}
	b, _ := json.Marshal(a.MCPServers().Servers["s"])
	var raw map[string]any
	json.Unmarshal(b, &raw)
	if got, _ := raw["nextRetryAt"].(string); got != s.NextRetryAt.Format(time.RFC3339Nano) {
		t.Errorf("JSON nextRetryAt = %v, want %s", raw["nextRetryAt"], s.NextRetryAt.Format(time.RFC3339Nano))
	}

	hs.Restart()
	clock.Fire()
	a.WaitForConnections(ctx)
	for s, _ = a.Server("s"); s.State != "ready"; s, _ = a.Server("s") {
		next()
	}
	if s.NextRetryAt != nil || s.SessionID == "" || s.ServerInfo == nil || s.ServerInfo.Name != "s" {
		t.Errorf("back: next retry %v, session %q, server info %+v; want none, a session, the server's name", s.NextRetryAt, s.SessionID, s.ServerInfo)
	}
}
