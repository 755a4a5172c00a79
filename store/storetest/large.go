package storetest

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/store"
)

// Sizes of Large: agents with 5 servers each, one in keepAwakeEvery
// keep-awake.
const (
	largeAgents    = 100_000
	largeServers   = 5
	keepAwakeEvery = 1000
)

// Large seeds a database with 100,000 agents of 5 servers each (500,000
// rows) by PutServers, and logs how long the first 100,000 rows took and
// how long ListNamespaces, ListKeepAwake, ListServers and GetServer take
// on it, as name=value lines. It checks what they return, never how long
// they take. It runs only with AGENTMCP_LONG=1 (it takes a minute or
// more), and skips a backend that is not a store.BatchPutter and
// store.KeepAwakeLister.
func Large(t *testing.T, b Backend, name string) {
	if os.Getenv("AGENTMCP_LONG") == "" {
		t.Skip("500,000 rows: set AGENTMCP_LONG=1 (make test-long)")
	}
	s := b.Open(t, Options{})
	bp := batchPutter(t, s)
	kl, ok := s.(store.KeepAwakeLister)
	if !ok {
		t.Skip("the store is not a store.KeepAwakeLister")
	}
	nl, ok := s.(namespaceLister)
	if !ok {
		t.Skip("the store has no ListNamespaces")
	}
	c := ctx(t)
	agent := func(i int) string { return fmt.Sprintf("chat/user-%06d", i) }
	rows := make([]store.Server, 0, 100_000)
	var wantKeep []string
	seed := func(from, to int) time.Duration {
		rows = rows[:0]
		for i := from; i < to; i++ {
			keep := i%keepAwakeEvery == keepAwakeEvery/2
			if keep {
				wantKeep = append(wantKeep, agent(i))
			}
			for j := range largeServers {
				rows = append(rows, store.Server{
					Namespace: agent(i),
					ID:        fmt.Sprintf("server-%d", j),
					Name:      fmt.Sprintf("Server %d", j),
					URL:       fmt.Sprintf("http://127.0.0.1:%d/mcp", 9000+j),
					Options:   store.ServerOptions{TransportType: "streamable-http", SessionID: "session", ProtocolVersion: "2025-11-25"},
					KeepAwake: keep && j == largeServers-1,
				})
			}
		}
		start := time.Now()
		if err := bp.PutServers(c, rows); err != nil {
			t.Fatalf("PutServers of %d rows: %v", len(rows), err)
		}
		return time.Since(start)
	}
	const chunk = 100_000 / largeServers // agents per 100,000 rows
	first := seed(0, chunk)
	t.Logf("%s_put_servers_100k_rows_seconds=%.2f", name, first.Seconds())
	total := first
	for from := chunk; from < largeAgents; from += chunk {
		total += seed(from, from+chunk)
	}
	t.Logf("%s_put_servers_500k_rows_seconds=%.2f", name, total.Seconds())

	// Each query three times: the first may read from disk, the others
	// from cache.
	timed := func(what string, fn func() error) {
		t.Helper()
		var times []time.Duration
		for range 3 {
			start := time.Now()
			if err := fn(); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			times = append(times, time.Since(start))
		}
		t.Logf("%s_%s_ms=%.2f (then %.2f, %.2f)", name, what, ms(times[0]), ms(times[1]), ms(times[2]))
	}
	timed("list_namespaces", func() error {
		got, err := nl.ListNamespaces(c)
		if err == nil && (len(got) != largeAgents || got[0] != agent(0) || got[largeAgents-1] != agent(largeAgents-1)) {
			err = fmt.Errorf("%d namespaces from %q to %q, want %d from %q to %q",
				len(got), got[0], got[len(got)-1], largeAgents, agent(0), agent(largeAgents-1))
		}
		return err
	})
	timed("list_keep_awake", func() error {
		got, err := kl.ListKeepAwake(c)
		if err == nil && fmt.Sprint(got) != fmt.Sprint(wantKeep) {
			err = fmt.Errorf("got %d namespaces, want %d (%q...)", len(got), len(wantKeep), wantKeep[:min(3, len(wantKeep))])
		}
		return err
	})
	timed("list_servers", func() error {
		got, err := s.ListServers(c, agent(largeAgents/2))
		if err == nil && len(got) != largeServers {
			err = fmt.Errorf("%d servers, want %d", len(got), largeServers)
		}
		return err
	})
	timed("get_server", func() error {
		_, err := s.GetServer(c, agent(largeAgents-1), "server-0")
		return err
	})
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
