package store_test

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/store"
	"github.com/agentmcp/agentmcp/store/sqlite"
)

// countingStore counts the probe's queries.
type countingStore struct {
	store.Store
	n atomic.Int32
}

func (c *countingStore) ListServers(ctx context.Context, ns string) ([]store.Server, error) {
	c.n.Add(1)
	return c.Store.ListServers(ctx, ns)
}

// TestProbe: a Probe asks the store at most once per ProbeTTL however
// often it is checked, keeps a cached answer within it (the store closed
// meanwhile), says the store does not answer once the answer is a TTL old,
// and logs the store's error once per failed query.
func TestProbe(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "probe.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var (
		mu  sync.Mutex
		now = time.Unix(1e9, 0)
	)
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}
	tick := func() {
		mu.Lock()
		now = now.Add(store.ProbeTTL)
		mu.Unlock()
	}
	var logs bytes.Buffer
	cs := &countingStore{Store: st}
	p := store.NewProbe(cs, &store.ProbeOptions{Now: clock, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	for range 20 {
		if err := p.Check(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := cs.n.Load(); n != 1 {
		t.Errorf("20 checks within the TTL asked the store %d times; want 1", n)
	}
	st.Close()
	if err := p.Check(ctx); err != nil {
		t.Errorf("a check within the TTL of the last answer: %v; want the cached nil", err)
	}
	tick()
	if err := p.Check(ctx); err == nil {
		t.Error("a check with the store closed, the answer a TTL old: nil")
	}
	p.Check(ctx) // cached: no query, no log line
	if n := cs.n.Load(); n != 2 {
		t.Errorf("the store was asked %d times; want 2", n)
	}
	if n := strings.Count(logs.String(), "\n"); n != 1 || !strings.Contains(logs.String(), "level=WARN") {
		t.Errorf("want one warning for the failed query: %s", logs.String())
	}
}
