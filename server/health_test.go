package server

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentmcp/agentmcp/internal/testing/pgtest"
	"github.com/agentmcp/agentmcp/store"
	"github.com/agentmcp/agentmcp/store/postgres"
)

// fakeNow is a clock for the store probe that moves only when told.
type fakeNow struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeNow) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeNow) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// readyz returns /readyz's status and reason.
func readyz(t *testing.T, base string) (int, string) {
	t.Helper()
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]string
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body["reason"]
}

// TestReadyzStore: on SQLite, /readyz is 200 while the store answers (how
// often the store is asked is store's TestProbe), turns 503
// once the store is unreachable (closed) and the last answer is a second
// old, and 503 while the server drains and after Close; /healthz stays 200.
func TestReadyzStore(t *testing.T) {
	e := newEnv(t, nil)
	clock := &fakeNow{t: time.Unix(1e9, 0)}
	e.srv.probe = store.NewProbe(e.srv.st, &store.ProbeOptions{Now: clock.now, Logger: e.srv.logger})
	for range 20 {
		if s, reason := readyz(t, e.ts.URL); s != http.StatusOK {
			t.Fatalf("readyz: %d %s", s, reason)
		}
	}
	e.st.Close()
	if s, _ := readyz(t, e.ts.URL); s != http.StatusOK {
		t.Errorf("readyz within the second of the last answer: %d; want the cached 200", s)
	}
	clock.add(store.ProbeTTL)
	if s, reason := readyz(t, e.ts.URL); s != http.StatusServiceUnavailable || reason != "database unavailable" {
		t.Errorf("readyz with the store closed: %d %q; want 503, database unavailable", s, reason)
	}
	resp, err := http.Get(e.ts.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("healthz with the store closed: %d", resp.StatusCode)
	}
}

// TestReadyzShutdown: /readyz is 503 as soon as the server drains (serve's
// shutdown begins with Drain) and after Close, the store being fine.
func TestReadyzShutdown(t *testing.T) {
	e := newEnv(t, nil)
	if s, reason := readyz(t, e.ts.URL); s != http.StatusOK {
		t.Fatalf("readyz: %d %s", s, reason)
	}
	if err := e.srv.Drain(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if s, reason := readyz(t, e.ts.URL); s != http.StatusServiceUnavailable || reason != "draining" {
		t.Errorf("readyz while draining: %d %q", s, reason)
	}
	if err := e.srv.Close(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if s, reason := readyz(t, e.ts.URL); s != http.StatusServiceUnavailable || reason != "shutting down" {
		t.Errorf("readyz after Close: %d %q", s, reason)
	}
}

// TestReadyzPostgres: /readyz turns 503 while the PostgreSQL server is
// down (its own server, stopped and restarted with Halt and Resume), and 200
// again once it is back. Without a token, the answer says only "database
// unavailable": the database's user, name, host and port (the driver's
// error) go to the log, once per probe.
func TestReadyzPostgres(t *testing.T) {
	own := pgtest.New()
	t.Cleanup(func() {
		if err := own.Stop(); err != nil {
			t.Error(err)
		}
	})
	dsn := own.Database(t)
	ctx := testCtx(t)
	st, err := postgres.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	var logs lockedBuffer
	srv, err := Open(ctx, st, &Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	clock := &fakeNow{t: time.Unix(1e9, 0)}
	srv.probe = store.NewProbe(srv.st, &store.ProbeOptions{Now: clock.now, Logger: srv.logger})
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		ts.Close()
		srv.Close(context.Background())
		st.Close()
	})
	if s, reason := readyz(t, ts.URL); s != http.StatusOK {
		t.Fatalf("readyz: %d %s", s, reason)
	}
	if err := own.Halt(); err != nil {
		t.Fatal(err)
	}
	clock.add(store.ProbeTTL)
	resp, err := http.Get(ts.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	details := []string{cfg.User, cfg.Database, cfg.Host, strconv.Itoa(int(cfg.Port))}
	var answer map[string]string
	if resp.StatusCode != http.StatusServiceUnavailable || json.Unmarshal(body, &answer) != nil || answer["reason"] != "database unavailable" {
		t.Errorf("readyz with PostgreSQL down: %d %s; want 503, database unavailable", resp.StatusCode, body)
	}
	for _, d := range details {
		if strings.Contains(string(body), d) {
			t.Errorf("readyz with PostgreSQL down shows %q: %s", d, body)
		}
	}
	if log := logs.String(); !strings.Contains(log, `error="postgres: `) || !strings.Contains(log, "level=WARN") {
		t.Errorf("the log does not say why the database is unavailable: %s", log)
	}
	readyz(t, ts.URL) // the cached answer: no second query, no second line
	if n := strings.Count(logs.String(), "\n"); n != 1 {
		t.Errorf("%d log lines for one failed probe; want 1: %s", n, logs.String())
	}
	if err := own.Resume(); err != nil {
		t.Fatal(err)
	}
	clock.add(store.ProbeTTL)
	if s, reason := readyz(t, ts.URL); s != http.StatusOK {
		t.Errorf("readyz with PostgreSQL back: %d %q", s, reason)
	}
}
