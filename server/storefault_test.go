package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/internal/testing/pgtest"
	"github.com/agentmcp/agentmcp/store"
	"github.com/agentmcp/agentmcp/store/postgres"
	"github.com/agentmcp/agentmcp/store/sqlite"
)

// storeEnv serves a Server on st, on 127.0.0.1, with its readiness
// probe's clock stopped (an answer stays cached until the test moves it).
// It is stopped when t ends, before st is closed.
func storeEnv(t *testing.T, st store.Store) (*env, *fakeNow) {
	t.Helper()
	srv, err := Open(testCtx(t), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeNow{t: time.Unix(1e9, 0)}
	srv.probe = store.NewProbe(srv.st, &store.ProbeOptions{Now: clock.now, Logger: srv.logger})
	e := &env{t: t, srv: srv, ts: httptest.NewServer(srv)}
	t.Cleanup(func() {
		srv.CloseStreams()
		e.ts.Close()
		srv.Close(context.Background())
	})
	return e, clock
}

// ownPostgres starts a PostgreSQL server for t alone (to be stopped,
// halted or frozen) and opens a store on it with the given deadline.
func ownPostgres(t *testing.T, timeout time.Duration) (*pgtest.Server, *postgres.Store) {
	t.Helper()
	own := pgtest.New()
	t.Cleanup(func() {
		if err := own.Stop(); err != nil {
			t.Error(err)
		}
	})
	dsn := own.Database(t)
	st, err := postgres.Open(testCtx(t), dsn, &postgres.Options{Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return own, st
}

// wantUnavailable checks that a request the store could not serve was
// answered 503 unavailable with Retry-After.
func wantUnavailable(t *testing.T, what string, status int, h http.Header, b []byte) {
	t.Helper()
	if status != http.StatusServiceUnavailable || h.Get("Retry-After") == "" {
		t.Errorf("%s: %d (Retry-After %q) %s; want 503 with Retry-After", what, status, h.Get("Retry-After"), b)
		return
	}
	if e := apiError(t, b); e.Code != api.CodeUnavailable {
		t.Errorf("%s: code %s; want %s", what, e.Code, api.CodeUnavailable)
	}
}

// echo calls the echo tool of server id of agentPath and checks it works.
func echo(t *testing.T, e *env, agentPath, id, what string) {
	t.Helper()
	status, _, b := e.do("POST", agentPath+"/servers/"+id+"/tools/call", `{"name":"echo","arguments":{"text":"hi"}}`)
	if status != http.StatusOK || !strings.Contains(string(b), "echo: hi") {
		t.Errorf("%s: calling %s: %d %s; want the echo", what, id, status, b)
	}
}

// addServer adds an MCP server at url as id to agentPath.
func addServer(t *testing.T, e *env, agentPath, id, url string) {
	t.Helper()
	if status, _, b := e.do("POST", agentPath+"/servers", fmt.Sprintf(`{"name":%q,"url":%q,"id":%q}`, id, url, id)); status/100 != 2 {
		t.Fatalf("adding %s to %s: %d %s", id, agentPath, status, b)
	}
}

// storedIDs returns the ids st holds for ns.
func storedIDs(t *testing.T, st store.Store, ns string) []string {
	t.Helper()
	rows, err := st.ListServers(testCtx(t), ns)
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{}
	for _, r := range rows {
		ids = append(ids, r.ID)
	}
	return ids
}

// TestStoreHung: with every PostgreSQL process stopped (SIGSTOP), the
// requests that need the store (an add, a remove, the wake of a sleeping
// agent, GET /agents) are answered 503 unavailable with Retry-After once
// the store's deadline passes, not when the database comes back; the
// server whose remove failed still works. After SIGCONT nothing is
// half-done: the failed add is not stored, the failed remove removed
// nothing, and the same requests succeed.
func TestStoreHung(t *testing.T) {
	own, st := ownPostgres(t, 500*time.Millisecond)
	e, clock := storeEnv(t, st)
	_, url := mcpServer(t, "up")
	const awake, asleep = "/agents/chat/awake", "/agents/chat/asleep"
	addServer(t, e, awake, "kept", url)
	addServer(t, e, asleep, "s", url)
	if status, _, b := e.do("POST", asleep+"/hibernate", ""); status != http.StatusNoContent {
		t.Fatalf("hibernate: %d %s", status, b)
	}

	thaw := own.Freeze(t)
	// Each request runs with a generous guard: without the store's
	// deadline it would wait for SIGCONT.
	guarded := func(what, method, path, body string) (int, http.Header, []byte) {
		t.Helper()
		type answer struct {
			status int
			h      http.Header
			b      []byte
		}
		ch := make(chan answer, 1)
		go func() {
			req, _ := http.NewRequest(method, e.ts.URL+path, strings.NewReader(body))
			if body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				ch <- answer{status: -1, b: []byte(err.Error())}
				return
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			ch <- answer{res.StatusCode, res.Header, b}
		}()
		select {
		case a := <-ch:
			return a.status, a.h, a.b
		case <-time.After(30 * time.Second):
			thaw()
			t.Fatalf("%s waited for the stopped database", what)
			return 0, nil, nil
		}
	}
	status, h, b := guarded("add", "POST", awake+"/servers", fmt.Sprintf(`{"name":"new","url":%q,"id":"new"}`, url))
	wantUnavailable(t, "add with the database stopped", status, h, b)
	status, h, b = guarded("remove", "DELETE", awake+"/servers/kept", "")
	wantUnavailable(t, "remove with the database stopped", status, h, b)
	echo(t, e, awake, "kept", "after the remove failed")
	status, h, b = guarded("wake", "GET", asleep+"/servers", "")
	wantUnavailable(t, "waking an agent with the database stopped", status, h, b)
	status, h, b = guarded("list", "GET", "/agents", "")
	wantUnavailable(t, "GET /agents with the database stopped", status, h, b)
	clock.add(store.ProbeTTL)
	if s, reason := readyz(t, e.ts.URL); s != http.StatusServiceUnavailable {
		t.Errorf("readyz with the database stopped: %d %q", s, reason)
	}

	thaw()
	if ids := storedIDs(t, st, "chat/awake"); len(ids) != 1 || ids[0] != "kept" {
		t.Errorf("stored after SIGCONT: %v; want [kept] (the add failed, the remove too)", ids)
	}
	echo(t, e, awake, "kept", "after SIGCONT")
	if status, _, b := e.do("GET", asleep+"/servers", ""); status != http.StatusOK || !strings.Contains(string(b), `"s"`) {
		t.Errorf("waking after SIGCONT: %d %s", status, b)
	}
	if status, _, b := e.do("DELETE", awake+"/servers/kept", ""); status != http.StatusNoContent {
		t.Errorf("remove after SIGCONT: %d %s", status, b)
	}
	if ids := storedIDs(t, st, "chat/awake"); len(ids) != 0 {
		t.Errorf("stored after the remove: %v", ids)
	}
	addServer(t, e, awake, "new", url)
}

// TestStoreOutage: in the first moments of a PostgreSQL outage, while the
// readiness probe's last answer (ready) is still cached, a request whose
// store call fails is 503 unavailable with Retry-After, not 500: the
// error itself says the store cannot serve. A remove refused so leaves the
// server as it was (stored, connected, callable); once the database is
// back, it goes through.
func TestStoreOutage(t *testing.T) {
	own, st := ownPostgres(t, 0)
	e, _ := storeEnv(t, st)
	_, url := mcpServer(t, "up")
	const a, sleeper = "/agents/chat/a", "/agents/chat/sleeper"
	addServer(t, e, a, "kept", url)
	addServer(t, e, sleeper, "s", url)
	if status, _, b := e.do("POST", sleeper+"/hibernate", ""); status != http.StatusNoContent {
		t.Fatalf("hibernate: %d %s", status, b)
	}
	if s, reason := readyz(t, e.ts.URL); s != http.StatusOK {
		t.Fatalf("readyz: %d %s", s, reason) // cached from now on: the clock is stopped
	}
	if err := own.Halt(); err != nil {
		t.Fatal(err)
	}
	status, h, b := e.do("POST", a+"/servers", fmt.Sprintf(`{"name":"new","url":%q,"id":"new"}`, url))
	wantUnavailable(t, "add with the database down", status, h, b)
	status, h, b = e.do("DELETE", a+"/servers/kept", "")
	wantUnavailable(t, "remove with the database down", status, h, b)
	if status, _, b := e.do("GET", a+"/servers/kept", ""); status != http.StatusOK || !strings.Contains(string(b), `"ready"`) {
		t.Errorf("the server after its remove failed: %d %s; want it listed, ready", status, b)
	}
	echo(t, e, a, "kept", "after the remove failed")
	status, h, b = e.do("GET", sleeper+"/servers", "")
	wantUnavailable(t, "waking an agent with the database down", status, h, b)
	status, h, b = e.do("GET", "/agents", "")
	wantUnavailable(t, "GET /agents with the database down", status, h, b)

	if err := own.Resume(); err != nil {
		t.Fatal(err)
	}
	if ids := storedIDs(t, st, "chat/a"); len(ids) != 1 || ids[0] != "kept" {
		t.Errorf("stored once the database is back: %v; want [kept]", ids)
	}
	if status, _, b := e.do("DELETE", a+"/servers/kept", ""); status != http.StatusNoContent {
		t.Errorf("remove once the database is back: %d %s", status, b)
	}
	if ids := storedIDs(t, st, "chat/a"); len(ids) != 0 {
		t.Errorf("stored after the remove: %v", ids)
	}
}

// smallDisk mounts a tmpfs of size bytes for t (unmounted when t ends),
// or skips t where no file system can be mounted (not root).
func smallDisk(t *testing.T, size int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "disk")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		t.Skipf("cannot mount a tmpfs for a full file system: %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// fill writes a file in dir until the file system is full, and returns a
// function that removes it.
func fill(t *testing.T, dir string) (free func()) {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	return func() {
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRemoveDiskFull: on a SQLite database whose file system is full, a
// remove fails (503 unavailable) and leaves the server exactly as it was:
// listed, stored, connected and callable. The refused write is logged,
// counted (store.WriteHealth, behind /metrics) and makes /readyz 503 while
// the disk is full; once there is room again, /readyz is 200 and the remove
// goes through.
func TestRemoveDiskFull(t *testing.T) {
	dir := smallDisk(t, 4<<20)
	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	st, err := sqlite.Open(testCtx(t), filepath.Join(dir, "agentmcp.db"), &sqlite.Options{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e, clock := storeEnv(t, st)
	_, url := mcpServer(t, "up")
	const a = "/agents/chat/a"
	addServer(t, e, a, "kept", url)
	e.srv.WaitForConnections(testCtx(t))

	free := fill(t, dir)
	status, h, b := e.do("DELETE", a+"/servers/kept", "")
	wantUnavailable(t, "remove on a full disk", status, h, b)
	if status, _, b := e.do("GET", a+"/servers/kept", ""); status != http.StatusOK || !strings.Contains(string(b), `"ready"`) {
		t.Errorf("the server after its remove failed: %d %s; want it listed, ready", status, b)
	}
	echo(t, e, a, "kept", "after the remove failed")
	if ids := storedIDs(t, st, "chat/a"); len(ids) != 1 {
		t.Errorf("stored after the remove failed: %v; want [kept]", ids)
	}
	if n, refusing := st.WriteHealth(); n == 0 || refusing == nil {
		t.Errorf("WriteHealth on a full disk: %d, %v; want a refused write", n, refusing)
	}
	if !strings.Contains(logs.String(), "store write refused") {
		t.Errorf("no log line of the refused write:\n%s", logs.String())
	}
	clock.add(store.ProbeTTL)
	if s, reason := readyz(t, e.ts.URL); s != http.StatusServiceUnavailable || !strings.Contains(reason, "refuses writes") {
		t.Errorf("readyz on a full disk: %d %q; want 503, the store refuses writes", s, reason)
	}

	free()
	clock.add(store.ProbeTTL)
	if s, reason := readyz(t, e.ts.URL); s != http.StatusOK {
		t.Errorf("readyz with room again: %d %q", s, reason)
	}
	if status, _, b := e.do("DELETE", a+"/servers/kept", ""); status != http.StatusNoContent {
		t.Errorf("remove with room again: %d %s", status, b)
	}
	if ids := storedIDs(t, st, "chat/a"); len(ids) != 0 {
		t.Errorf("stored after the remove: %v", ids)
	}
}
