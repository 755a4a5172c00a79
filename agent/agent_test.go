package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/internal/testing/pgtest"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/netguard"
	"github.com/agentmcp/agentmcp/store"
	"github.com/agentmcp/agentmcp/store/postgres"
	"github.com/agentmcp/agentmcp/store/sqlite"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var pg = pgtest.New()

func TestMain(m *testing.M) {
	if os.Getenv("AGENTMCP_TEST_CRASH_CHILD") != "" {
		os.Exit(crashChild())
	}
	if os.Getenv("AGENTMCP_TEST_STDIO_SERVER") != "" {
		os.Exit(stdioServer())
	}
	if os.Getenv("AGENTMCP_TEST_AUDIT_CHILD") != "" {
		os.Exit(auditChild()) // audit_kill_test.go
	}
	os.Exit(pg.Main(m))
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// reopener returns a function that opens, each time it is called, the same
// store of backend ("sqlite": a file of the test's; "postgres": a database
// of the test's), closed when the test ends: a restart's store.
func reopener(t *testing.T, backend string) func() store.Store {
	t.Helper()
	if backend == "sqlite" {
		path := filepath.Join(t.TempDir(), "agent.db")
		return func() store.Store { return openSQLite(t, path) }
	}
	dsn := pg.Database(t)
	return func() store.Store {
		st, err := postgres.Open(testCtx(t), dsn, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
}

// openSQLite opens a store in a file of the test's, closed when it ends.
func openSQLite(t testing.TB, path string) store.Store {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), "agent.db")
	}
	st, err := sqlite.Open(testCtx(t), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// openAgent opens an agent, closed when the test ends.
func openAgent(t *testing.T, st store.Store, name string, opts *agent.Options) *agent.Agent {
	t.Helper()
	a, err := agent.Open(testCtx(t), st, "TestAgent", name, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(context.Background()) })
	return a
}

// counting hosts a go-sdk server in mode and counts the requests it gets
// and its handshakes.
type counting struct {
	*mcptest.HTTPServer
	srv        *mcptest.Server
	requests   atomic.Int64
	handshakes atomic.Int64
}

func serve(t *testing.T, mode mcptest.Mode) *counting {
	c := &counting{}
	c.HTTPServer = mcptest.ServeHandler(t, c.handler(t, mode))
	return c
}

// handler is a new go-sdk server in mode (c.srv), behind a handler that
// counts its requests and handshakes.
func (c *counting) handler(t *testing.T, mode mcptest.Mode) http.Handler {
	c.srv = mcptest.NewServer("s")
	real := mcptest.Handler(t, mode, func() *mcp.Server { return c.srv.Server })
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.requests.Add(1)
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct{ Method string }
		json.Unmarshal(body, &msg)
		if msg.Method == "initialize" || msg.Method == "server/discover" {
			c.handshakes.Add(1)
		}
		real.ServeHTTP(w, r)
	})
}

func TestAddMCPServer(t *testing.T) {
	s := serve(t, mcptest.Stateless)
	st := openSQLite(t, "")
	a := openAgent(t, st, "one", nil)
	ctx := testCtx(t)

	res, err := a.AddMCPServer(ctx, "Test", s.URL, nil)
	if err != nil || res.State != mcpclient.StateReady || len(res.ID) != 8 {
		t.Fatalf("AddMCPServer = %+v, %v", res, err)
	}
	// The same name and an equivalent URL: the same server, nothing new.
	before := s.requests.Load()
	again, err := a.AddMCPServer(ctx, "Test", strings.Replace(s.URL, "http://", "HTTP://", 1), nil)
	if err != nil || again != res {
		t.Errorf("second add = %+v, %v; want %+v", again, err, res)
	}
	if n := s.requests.Load() - before; n != 0 {
		t.Errorf("the idempotent add made %d requests", n)
	}
	// The same name with another URL is a second server; both servers'
	// tools are there.
	s2 := serve(t, mcptest.Stateful)
	other, err := a.AddMCPServer(ctx, "Test", s2.URL, nil)
	if err != nil || other.ID == res.ID {
		t.Fatalf("add with another URL = %+v, %v", other, err)
	}
	state := a.MCPServers()
	if len(state.Servers) != 2 || len(state.Tools) != 12 {
		t.Errorf("%d servers, %d tools; want 2 and 12", len(state.Servers), len(state.Tools))
	}
	srv := state.Servers[res.ID]
	if srv.Name != "Test" || srv.State != "ready" || srv.AuthURL != nil || srv.Error != nil || srv.Capabilities == nil || srv.Instructions == nil {
		t.Errorf("server state %+v", srv)
	}
	rows, _ := st.ListServers(ctx, a.Namespace())
	if len(rows) != 2 {
		t.Errorf("%d rows stored", len(rows))
	}

	// Removing deletes the row and its OAuth data, and is not an error for
	// an unknown id.
	st.KVPut(ctx, a.Namespace(), res.ID, "token", []byte("secret"), time.Time{})
	if err := a.RemoveMCPServer(ctx, res.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.GetServer(ctx, a.Namespace(), res.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("row after removal: %v", err)
	}
	if _, err := st.KVGet(ctx, a.Namespace(), res.ID, "token"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("OAuth data after removal: %v", err)
	}
	if got := a.MCPServers(); len(got.Servers) != 1 || len(got.Tools) != 6 {
		t.Errorf("after removal: %d servers, %d tools", len(got.Servers), len(got.Tools))
	}
	if err := a.RemoveMCPServer(ctx, "nope"); err != nil {
		t.Errorf("removing an unknown id: %v", err)
	}
}

func TestAddMCPServerRefusals(t *testing.T) {
	st := openSQLite(t, "")
	a := openAgent(t, st, "refusals", nil)
	ctx := testCtx(t)
	if _, err := a.AddMCPServer(ctx, "Bad", "not a url", nil); err == nil {
		t.Errorf("garbage URL accepted")
	}
	_, err := a.AddMCPServer(ctx, "Metadata", "http://169.254.169.254/latest", nil)
	if !errors.Is(err, netguard.ErrBlockedURL) || !strings.HasPrefix(err.Error(), "Blocked URL:") {
		t.Errorf("blocked URL: %v", err)
	}
	if _, err := a.AddMCPServer(ctx, "Down", "http://127.0.0.1:1/mcp", nil); err == nil {
		t.Errorf("unreachable server added without error")
	}
	bad := &agent.AddOptions{Transport: mcpclient.TransportOptions{Headers: http.Header{"Mcp-Session-Id": {"x"}}}}
	if _, err := a.AddMCPServer(ctx, "BadHeader", "http://127.0.0.1:2/mcp", bad); err == nil {
		t.Errorf("a reserved header was accepted")
	}
	rows, _ := st.ListServers(ctx, a.Namespace())
	if len(rows) != 1 || rows[0].Name != "Down" {
		t.Errorf("stored rows %+v; want only the unreachable server, kept for a retry", rows)
	}
	// Identity hiding needs a callback path.
	hidden := openAgent(t, st, "hidden", &agent.Options{HideIdentity: true, CallbackHost: "https://agents.example.com"})
	if _, err := hidden.AddMCPServer(ctx, "X", "http://127.0.0.1:1/mcp", nil); err == nil {
		t.Errorf("hidden identity without a callback path accepted")
	}
}

// TestStableIDs: ids are normalised, collisions refused, and giving an id
// to a server added under a generated one migrates it in place.
func TestStableIDs(t *testing.T) {
	s := serve(t, mcptest.Stateful)
	st := openSQLite(t, "")
	a := openAgent(t, st, "ids", nil)
	ctx := testCtx(t)

	res, err := a.AddMCPServer(ctx, "GitHub", s.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	st.KVPut(ctx, a.Namespace(), res.ID, "client_info", []byte("registered"), time.Time{})
	session, _ := a.Manager().Server(res.ID)
	handshakes := s.handshakes.Load()

	migrated, err := a.AddMCPServer(ctx, "GitHub", s.URL, &agent.AddOptions{ID: "GitHub MCP!"})
	if err != nil || migrated.ID != "github-mcp" || migrated.State != mcpclient.StateReady {
		t.Fatalf("migrating add = %+v, %v", migrated, err)
	}
	rows, _ := st.ListServers(ctx, a.Namespace())
	if len(rows) != 1 || rows[0].ID != "github-mcp" {
		t.Errorf("rows after migration: %+v", rows)
	}
	if v, err := st.KVGet(ctx, a.Namespace(), "github-mcp", "client_info"); err != nil || string(v) != "registered" {
		t.Errorf("OAuth data did not move: %q, %v", v, err)
	}
	info, ok := a.Manager().Server("github-mcp")
	if !ok || info.SessionID != session.SessionID || s.handshakes.Load() != handshakes {
		t.Errorf("the live connection did not move: %+v (handshakes %d -> %d)", info, handshakes, s.handshakes.Load())
	}
	if _, ok := a.Manager().Server(res.ID); ok {
		t.Errorf("the old id is still registered")
	}
	tools := a.MCPServers().Tools
	if len(tools) == 0 || tools[0].ServerID != "github-mcp" {
		t.Errorf("tools not tagged with the new id: %+v", tools[:1])
	}

	// An id that belongs to another (name, URL) is refused.
	s2 := serve(t, mcptest.Stateful)
	if _, err := a.AddMCPServer(ctx, "Other", s2.URL, &agent.AddOptions{ID: "github-mcp"}); !errors.Is(err, agent.ErrIDInUse) {
		t.Errorf("id collision: %v", err)
	}
	if rows, _ := st.ListServers(ctx, a.Namespace()); len(rows) != 1 {
		t.Errorf("the refused add stored something: %d rows", len(rows))
	}
}

// TestConcurrentAdds: 50 adds of one server at once make one row, one
// connection, and give every caller the same id.
func TestConcurrentAdds(t *testing.T) {
	s := serve(t, mcptest.Stateful)
	st := openSQLite(t, "")
	a := openAgent(t, st, "busy", nil)
	ctx := testCtx(t)
	var wg sync.WaitGroup
	ids := make([]string, 50)
	errs := make([]error, 50)
	for i := range 50 {
		wg.Go(func() {
			res, err := a.AddMCPServer(ctx, "Busy", s.URL, nil)
			ids[i], errs[i] = res.ID, err
		})
	}
	wg.Wait()
	for i := range 50 {
		if errs[i] != nil || ids[i] != ids[0] {
			t.Fatalf("caller %d: id %q, err %v; caller 0: %q", i, ids[i], errs[i], ids[0])
		}
	}
	rows, _ := st.ListServers(ctx, a.Namespace())
	if len(rows) != 1 {
		t.Errorf("%d rows", len(rows))
	}
	if n := s.handshakes.Load(); n != 2 { // the 2026-07-28 probe and initialize
		t.Errorf("%d handshake requests; want one connection", n)
	}
}

// TestRestart: three servers, one waiting for OAuth; after a restart the
// two plain ones are ready and the third is authenticating with its URL,
// not contacted.
func TestRestart(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			open := reopener(t, backend)
			plain1, plain2, oauth := serve(t, mcptest.Stateless), serve(t, mcptest.Stateful), serve(t, mcptest.Stateful)
			ctx := testCtx(t)
			st := open()
			a, err := agent.Open(ctx, st, "TestAgent", "restart", nil)
			if err != nil {
				t.Fatal(err)
			}
			r1, err1 := a.AddMCPServer(ctx, "One", plain1.URL, nil)
			r2, err2 := a.AddMCPServer(ctx, "Two", plain2.URL, &agent.AddOptions{ID: "two", Transport: mcpclient.TransportOptions{Headers: http.Header{"X-Key": {"k"}}}})
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			// The third is waiting for the user to authorise.
			authURL := "https://auth.example.com/authorize?state=abc"
			if err := st.PutServer(ctx, store.Server{Namespace: a.Namespace(), ID: "three", Name: "Three", URL: oauth.URL,
				CallbackURL: "https://agents.example.com/agents/test-agent/restart/callback", AuthURL: authURL}); err != nil {
				t.Fatal(err)
			}
			if err := a.Close(ctx); err != nil {
				t.Fatal(err)
			}
			st.Close()
			oauthRequests := oauth.requests.Load()

			st = open()
			a = openAgent(t, st, "restart", nil)
			a.WaitForConnections(ctx)
			state := a.MCPServers()
			if len(state.Servers) != 3 {
				t.Fatalf("%d servers after the restart", len(state.Servers))
			}
			for _, id := range []string{r1.ID, r2.ID} {
				if s := state.Servers[id]; s.State != "ready" {
					t.Errorf("%s is %s after the restart (%v)", id, s.State, s.Error)
				}
			}
			three := state.Servers["three"]
			if three.State != "authenticating" || three.AuthURL == nil || *three.AuthURL != authURL {
				t.Errorf("waiting server: %+v", three)
			}
			if n := oauth.requests.Load() - oauthRequests; n != 0 {
				t.Errorf("the server waiting for OAuth got %d requests", n)
			}
			if len(state.Tools) != 12 {
				t.Errorf("%d tools after the restart", len(state.Tools))
			}
			// The resumed sessions need no new handshake.
			if _, err := a.Manager().CallTool(ctx, "two", "echo", map[string]any{"text": "x"}, nil); err != nil {
				t.Errorf("call after the restart: %v", err)
			}
		})
	}
}

// TestStaleSession: a restored legacy session that the server no longer
// knows reaches ready with a new session id after one handshake.
func TestStaleSession(t *testing.T) {
	s := serve(t, mcptest.Stateful)
	path := filepath.Join(t.TempDir(), "agent.db")
	st := openSQLite(t, path)
	ctx := testCtx(t)
	a, err := agent.Open(ctx, st, "TestAgent", "stale", nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.AddMCPServer(ctx, "S", s.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	old, _ := a.Manager().Server(res.ID)
	a.Close(ctx)
	row, _ := st.GetServer(ctx, a.Namespace(), res.ID)
	if row.Options.SessionID != old.SessionID || row.Options.SessionID == "" {
		t.Fatalf("stored session %q, live %q", row.Options.SessionID, old.SessionID)
	}

	s.ExpireSessions()
	handshakes := s.handshakes.Load()
	var logs strings.Builder
	var logMu sync.Mutex
	a = openAgent(t, st, "stale", &agent.Options{Logger: slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		logMu.Lock()
		defer logMu.Unlock()
		return logs.Write(p)
	}), &slog.HandlerOptions{Level: slog.LevelDebug}))})
	defer func() {
		if t.Failed() {
			logMu.Lock()
			t.Log(logs.String())
			logMu.Unlock()
		}
	}()
	a.WaitForConnections(ctx)
	info, _ := a.Manager().Server(res.ID)
	if info.State != mcpclient.StateReady || info.SessionID == "" || info.SessionID == old.SessionID {
		t.Errorf("after the stale session: %s, session %q (old %q), %v", info.State, info.SessionID, old.SessionID, info.Error)
	}
	if n := s.handshakes.Load() - handshakes; n != 1 {
		t.Errorf("%d handshakes to recover; want 1", n)
	}
	// The new session is what is stored now.
	row, _ = st.GetServer(ctx, a.Namespace(), res.ID)
	if row.Options.SessionID != info.SessionID {
		t.Errorf("stored session %q, live %q", row.Options.SessionID, info.SessionID)
	}
}

// TestNamespaces: agents sharing a database see only their own servers.
func TestNamespaces(t *testing.T) {
	s := serve(t, mcptest.Stateless)
	st := openSQLite(t, "")
	ctx := testCtx(t)
	a := openAgent(t, st, "alice", nil)
	b := openAgent(t, st, "bob", nil)
	if _, err := a.AddMCPServer(ctx, "Shared", s.URL, &agent.AddOptions{ID: "shared"}); err != nil {
		t.Fatal(err)
	}
	if got := b.MCPServers(); len(got.Servers) != 0 {
		t.Errorf("bob sees %d servers", len(got.Servers))
	}
	if _, err := b.AddMCPServer(ctx, "Shared", s.URL, &agent.AddOptions{ID: "shared"}); err != nil {
		t.Errorf("the same id in another agent: %v", err)
	}
	if err := b.RemoveMCPServer(ctx, "shared"); err != nil {
		t.Fatal(err)
	}
	if got := a.MCPServers(); len(got.Servers) != 1 {
		t.Errorf("bob's removal reached alice: %d servers", len(got.Servers))
	}
}

// TestOnMCPUpdate: listeners get the state after changes.
func TestOnMCPUpdate(t *testing.T) {
	s := serve(t, mcptest.Stateless)
	a := openAgent(t, openSQLite(t, ""), "updates", nil)
	got := make(chan agent.MCPServersState, 100)
	dispose := a.OnMCPUpdate(func(st agent.MCPServersState) { got <- st })
	defer dispose()
	ctx := testCtx(t)
	res, err := a.AddMCPServer(ctx, "U", s.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, got, func(st agent.MCPServersState) bool {
		return st.Servers[res.ID].State == "ready" && len(st.Tools) == 6
	})
	s.srv.AddTool("late")
	waitState(t, got, func(st agent.MCPServersState) bool { return len(st.Tools) == 7 })
	a.RemoveMCPServer(ctx, res.ID)
	waitState(t, got, func(st agent.MCPServersState) bool { return len(st.Servers) == 0 })
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func waitState(t *testing.T, ch chan agent.MCPServersState, ok func(agent.MCPServersState) bool) {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case st := <-ch:
			if ok(st) {
				return
			}
		case <-timeout:
			t.Fatal("timed out waiting for an update")
		}
	}
}

// TestSecretsAtRest: with a key, header values are not in the database
// file; MCPServers never shows them.
func TestSecretsAtRest(t *testing.T) {
	s := serve(t, mcptest.Stateless)
	path := filepath.Join(t.TempDir(), "agent.db")
	cipher, err := store.CipherFromPassphrase("a passphrase of some length")
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(testCtx(t), path, &sqlite.Options{Cipher: cipher})
	if err != nil {
		t.Fatal(err)
	}
	a := openAgent(t, st, "secrets", nil)
	withSecrets := strings.Replace(s.URL, "http://", "http://user-secret:password-secret@", 1) + "?token=query-secret"
	_, err = a.AddMCPServer(testCtx(t), "S", withSecrets, &agent.AddOptions{
		Transport: mcpclient.TransportOptions{Headers: http.Header{"Authorization": {"Bearer header-secret"}}}})
	if err != nil {
		t.Fatal(err)
	}
	a.Close(testCtx(t))
	st.Close()
	raw, _ := os.ReadFile(path)
	wal, _ := os.ReadFile(path + "-wal")
	for _, secret := range []string{"header-secret", "user-secret", "password-secret", "query-secret"} {
		if bytes.Contains(append(raw, wal...), []byte(secret)) {
			t.Errorf("%s is in the database file in plaintext", secret)
		}
	}
	if !bytes.Contains(append(raw, wal...), []byte(s.URL)) {
		t.Errorf("the database file lacks the URL %s: the check above proves nothing", s.URL)
	}
	out, _ := json.Marshal(a.MCPServers())
	if bytes.Contains(out, []byte("secret")) {
		t.Errorf("MCPServers shows a secret: %s", out)
	}
}
