package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/internal/pgtest"
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

func (p *storeProbe) queries() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n
}

// TestReadyzStore: on SQLite, /readyz is 200 while the store answers, asks
// the store at most once a second however often it is probed, turns 503
// once the store is unreachable (closed) and the last answer is a second
// old, and 503 while the server drains and after Close; /healthz stays 200.
func TestReadyzStore(t *testing.T) {
	e := newEnv(t, nil)
	clock := &fakeNow{t: time.Unix(1e9, 0)}
	e.srv.probe.now = clock.now
	for range 20 {
		if s, reason := readyz(t, e.ts.URL); s != http.StatusOK {
			t.Fatalf("readyz: %d %s", s, reason)
		}
	}
	if n := e.srv.probe.queries(); n != 1 {
		t.Errorf("20 probes in one second asked the store %d times; want 1", n)
	}
	e.st.Close()
	if s, _ := readyz(t, e.ts.URL); s != http.StatusOK {
		t.Errorf("readyz within the second of the last answer: %d; want the cached 200", s)
	}
	clock.add(probeTTL)
	if s, reason := readyz(t, e.ts.URL); s != http.StatusServiceUnavailable || !strings.Contains(reason, "store does not answer") {
		t.Errorf("readyz with the store closed: %d %q; want 503, the store does not answer", s, reason)
	}
	if n := e.srv.probe.queries(); n != 2 {
		t.Errorf("the store was asked %d times; want 2", n)
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
// again once it is back.
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
	srv, err := Open(ctx, st, nil)
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	clock := &fakeNow{t: time.Unix(1e9, 0)}
	srv.probe.now = clock.now
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
	clock.add(probeTTL)
	if s, reason := readyz(t, ts.URL); s != http.StatusServiceUnavailable || !strings.Contains(reason, "store does not answer") {
		t.Errorf("readyz with PostgreSQL down: %d %q", s, reason)
	}
	if err := own.Resume(); err != nil {
		t.Fatal(err)
	}
	clock.add(probeTTL)
	if s, reason := readyz(t, ts.URL); s != http.StatusOK {
		t.Errorf("readyz with PostgreSQL back: %d %q", s, reason)
	}
}
