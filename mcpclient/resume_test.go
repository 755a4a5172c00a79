package mcpclient_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/agentmcp/agentmcp/internal/testing/fixture"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// countingServer hosts a go-sdk server in mode and counts its handshakes.
func countingServer(t *testing.T, mode mcptest.Mode) (hs *mcptest.HTTPServer, handshakes *atomic.Int64) {
	handshakes = new(atomic.Int64)
	return mcptest.ServeHandler(t, countingHandler(t, mode, handshakes)), handshakes
}

// countingHandler serves a new go-sdk server in mode, counting handshakes
// in handshakes: what a restarted process serves.
func countingHandler(t *testing.T, mode mcptest.Mode, handshakes *atomic.Int64) http.Handler {
	srv := mcptest.NewServer("s")
	real := mcptest.Handler(t, mode, func() *mcp.Server { return srv.Server })
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct{ Method string }
		json.Unmarshal(body, &msg)
		if msg.Method == "initialize" || msg.Method == "server/discover" {
			handshakes.Add(1)
		}
		real.ServeHTTP(w, r)
	})
}

// saveResume round-trips a Resume through JSON, as storage would.
func saveResume(t *testing.T, m *mcpclient.Manager, id string) *mcpclient.Resume {
	t.Helper()
	info, _ := m.Server(id)
	if info.Resume == nil {
		t.Fatalf("%s has no resumable session", id)
	}
	data, err := json.Marshal(info.Resume)
	if err != nil {
		t.Fatal(err)
	}
	var r mcpclient.Resume
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

// TestResume: a session saved before a restart is resumed without a
// handshake, in both eras; a saved session the server no longer knows is
// replaced after one fresh handshake.
func TestResume(t *testing.T) {
	for _, era := range []struct {
		name string
		mode mcptest.Mode
	}{{"2025-11-25", mcptest.Stateful}, {"2026-07-28", mcptest.Stateless}} {
		t.Run(era.name, func(t *testing.T) {
			hs, handshakes := countingServer(t, era.mode)
			ctx := testCtx(t)

			m1 := mcpclient.New(nil)
			connectReady(t, m1, "s1", mcpclient.ServerOptions{URL: hs.URL})
			saved := saveResume(t, m1, "s1")
			if err := m1.Close(ctx); err != nil { // a restart: the session stays alive
				t.Fatal(err)
			}
			before := handshakes.Load()

			m2 := newManager(t, nil)
			connectReady(t, m2, "s1", mcpclient.ServerOptions{URL: hs.URL, Resume: saved})
			if n := handshakes.Load() - before; n != 0 {
				t.Errorf("resuming cost %d handshakes", n)
			}
			info, _ := m2.Server("s1")
			if info.SessionID != saved.SessionID || info.ProtocolVersion != saved.ProtocolVersion {
				t.Errorf("resumed %q/%s, saved %q/%s", info.SessionID, info.ProtocolVersion, saved.SessionID, saved.ProtocolVersion)
			}
			if _, err := m2.CallTool(ctx, "s1", "echo", map[string]any{"text": "resumed"}, nil); err != nil {
				t.Errorf("call on the resumed session: %v", err)
			}
			if era.mode != mcptest.Stateful {
				return
			}

			// The server forgets the session while we are away: one fresh
			// handshake, then ready with a new session id.
			stale := saveResume(t, m2, "s1")
			hs.ExpireSessions()
			before = handshakes.Load()
			m3 := newManager(t, nil)
			ctx3 := testCtx(t)
			m3.RegisterServer(ctx3, "s1", mcpclient.ServerOptions{URL: hs.URL, Resume: stale})
			if r, _ := m3.ConnectToServer(ctx3, "s1"); r.State != mcpclient.StateConnected {
				t.Fatalf("connect with a stale session: %+v", r)
			}
			d, _ := m3.DiscoverIfConnected(ctx3, "s1", nil)
			if !d.Success {
				t.Fatalf("discovery with a stale session: %+v", d)
			}
			info, _ = m3.Server("s1")
			if info.State != mcpclient.StateReady || info.SessionID == "" || info.SessionID == stale.SessionID {
				t.Errorf("after the stale session: %s, session %q (stale %q)", info.State, info.SessionID, stale.SessionID)
			}
			if n := handshakes.Load() - before; n != 1 {
				t.Errorf("%d handshakes to recover, want 1", n)
			}
		})
	}
}

// TestCloseEndsSessions: by default Close leaves a stateful server's
// session alive for a later resumption; with EndSessionsOnClose, as a
// caller that will not resume sets it, Close ends it with a DELETE.
func TestCloseEndsSessions(t *testing.T) {
	for _, tt := range []struct {
		name string
		end  bool
		impl mcpclient.TransportImplementation
	}{
		{name: "keep"},
		{name: "end", end: true},
		{name: "end/go-sdk", end: true, impl: mcpclient.ImplementationGoSDK},
	} {
		t.Run(tt.name, func(t *testing.T) {
			hs := mcptest.Serve(t, mcptest.Stateful, func() *mcp.Server { return mcptest.NewServer("s").Server })
			m := mcpclient.New(&mcpclient.Options{EndSessionsOnClose: tt.end})
			connectReady(t, m, "s", mcpclient.ServerOptions{URL: hs.URL,
				Transport: mcpclient.TransportOptions{Implementation: tt.impl}})
			info, _ := m.Server("s")
			if err := m.Close(testCtx(t)); err != nil {
				t.Fatal(err)
			}
			all, ended := hs.Sessions()
			want := []string(nil)
			if tt.end {
				want = []string{info.SessionID}
			}
			if len(all) != 1 || all[0] != info.SessionID || !slices.Equal(ended, want) {
				t.Errorf("sessions %q, ended %q; want %q ended", all, ended, want)
			}
		})
	}
}

// TestResumeRejected: a server that answers a saved session it does not
// know with something else than the spec's 404 (server-everything's
// "400 No valid session ID provided", a 410, any 4xx to the first
// request) gets exactly one fresh handshake, and ends ready with its
// tools, never connected with none. The session it gave up is ended (a
// DELETE), as it may live on on the server, unless the server answered
// 404, which says it does not.
func TestResumeRejected(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		body   string
	}{
		{"404", http.StatusNotFound, "session not found"},
		{"400 naming the session", http.StatusBadRequest, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}`},
		{"410 naming the session", http.StatusGone, "session gone"},
		{"400 on the first request", http.StatusBadRequest, "bad request"},
		{"403 on the first request", http.StatusForbidden, "forbidden"},
		{"duplicate request id", http.StatusBadRequest, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"duplicate in-flight request ID 2"},"id":2}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var forgotten atomic.Value // the session id the server no longer knows
			forgotten.Store("")
			var deletes atomic.Int64 // DELETEs of the forgotten session
			handshakes := new(atomic.Int64)
			real := countingHandler(t, mcptest.Stateful, handshakes)
			hs := mcptest.ServeHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if sid := r.Header.Get("Mcp-Session-Id"); sid != "" && sid == forgotten.Load() {
					if r.Method == http.MethodDelete {
						deletes.Add(1)
					}
					if tc.body[0] == '{' {
						w.Header().Set("Content-Type", "application/json")
					}
					w.WriteHeader(tc.status)
					io.WriteString(w, tc.body)
					return
				}
				real.ServeHTTP(w, r)
			}))
			ctx := testCtx(t)
			m1 := mcpclient.New(nil)
			connectReady(t, m1, "s1", mcpclient.ServerOptions{URL: hs.URL})
			saved := saveResume(t, m1, "s1")
			if err := m1.Close(ctx); err != nil {
				t.Fatal(err)
			}
			forgotten.Store(saved.SessionID)
			before := handshakes.Load()

			m2 := newManager(t, nil)
			m2.RegisterServer(ctx, "s1", mcpclient.ServerOptions{URL: hs.URL, Resume: saved})
			m2.EstablishConnection("s1")
			m2.WaitForConnections(ctx)
			info, _ := m2.Server("s1")
			if info.State != mcpclient.StateReady || info.SessionID == saved.SessionID {
				t.Errorf("after the rejected session: %s (%v), session %q (saved %q)", info.State, info.Error, info.SessionID, saved.SessionID)
			}
			if n := len(m2.ListTools(mcpclient.Filter{})); n == 0 {
				t.Error("no tools")
			}
			if n := handshakes.Load() - before; n != 1 {
				t.Errorf("%d handshakes, want 1", n)
			}
			want := int64(1)
			if tc.status == http.StatusNotFound {
				want = 0
			}
			if n := deletes.Load(); n != want {
				t.Errorf("the session given up got %d DELETEs, want %d", n, want)
			}
		})
	}
}

// TestResumeCancelledDiscovery: a discovery cancelled by its caller before
// the server answered does not confirm a resumed session, so the next one,
// finding the server unreachable, fails the server as a restore must.
func TestResumeCancelledDiscovery(t *testing.T) {
	hs := mcptest.Serve(t, mcptest.Stateless, func() *mcp.Server { return mcptest.NewServer("s").Server })
	ctx := testCtx(t)
	m1 := newManager(t, nil)
	connectReady(t, m1, "s1", mcpclient.ServerOptions{URL: hs.URL})
	saved := saveResume(t, m1, "s1")

	// The same session, resumed against an address where nothing answers.
	m := newManager(t, nil)
	retry := &mcpclient.RetryOptions{MaxAttempts: 1, DisableBackground: true}
	if _, err := m.RegisterServer(ctx, "s1", mcpclient.ServerOptions{URL: "http://" + fixture.RefusingAddr(t) + "/mcp", Resume: saved, Retry: retry}); err != nil {
		t.Fatal(err)
	}
	if res, err := m.ConnectToServer(ctx, "s1"); err != nil || res.State != mcpclient.StateConnected {
		t.Fatalf("resuming: %+v, %v", res, err)
	}
	gone, cancel := context.WithCancel(ctx)
	cancel() // the caller went away before anything was exchanged
	if d, _ := m.DiscoverIfConnected(gone, "s1", nil); d.Success {
		t.Fatalf("a cancelled discovery succeeded: %+v", d)
	}
	d, err := m.DiscoverIfConnected(ctx, "s1", nil)
	if err != nil || d.State != mcpclient.StateFailed {
		t.Errorf("discovery of the resumed session with the server unreachable: %+v, %v; want failed", d, err)
	}
	if info, _ := m.Server("s1"); info.State != mcpclient.StateFailed {
		t.Errorf("state %s (%v); want failed", info.State, info.Error)
	}
}
