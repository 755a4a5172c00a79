package server

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/agentmcp/agentmcp/store"
)

// Bounds of the store probe behind /readyz: a probe that takes longer than
// probeTimeout says the store does not answer, and an answer is reused for
// probeTTL, so that probes and scrapes at any rate cost the store at most
// one query a second.
const (
	probeTimeout = 2 * time.Second
	probeTTL     = time.Second
)

// storeProbe asks the store a cheap question and caches the answer for
// probeTTL. Concurrent callers share one query: the others wait for it.
// A failed query is logged, with the store's error, which may name the
// database, its host and its user: that detail goes to the log only, never
// into an answer (unavailableReason).
type storeProbe struct {
	now    func() time.Time // time.Now; tests set it
	logger *slog.Logger     // nil: none

	mu  sync.Mutex // held during a query
	at  time.Time  // when err was learnt; zero before the first query
	err error
	n   int // queries made, for tests
}

// check returns the store's answer, nil when it is reachable, asking it
// unless an answer younger than probeTTL is at hand. The query does not end
// with ctx (a caller that goes away does not make the answer an error), but
// after probeTimeout.
func (p *storeProbe) check(ctx context.Context, st store.Store) error {
	now := time.Now
	if p.now != nil {
		now = p.now
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.at.IsZero() {
		if age := now().Sub(p.at); age >= 0 && age < probeTTL {
			return p.err
		}
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), probeTimeout)
	defer cancel()
	_, p.err = st.ListServers(ctx, "agentmcp/readyz")
	if p.err == nil {
		p.err = checkWrites(ctx, st)
	}
	p.at = now()
	p.n++
	if p.err != nil && p.logger != nil {
		p.logger.Warn("the store does not answer", "error", p.err)
	}
	return p.err
}

// checkWrites returns why the store refuses writes, or nil: while its last
// write was refused (store.WriteHealth), a write of its own (a key that
// expires at once) tells whether it still does. A store that accepts
// writes costs nothing more.
func checkWrites(ctx context.Context, st store.Store) error {
	wh, ok := st.(store.WriteHealth)
	if !ok {
		return nil
	}
	if _, refusing := wh.WriteHealth(); refusing == nil {
		return nil
	}
	if err := st.KVPut(ctx, "agentmcp/readyz", "probe", "write", []byte{1}, time.Now()); err != nil {
		return writesRefused{err}
	}
	return nil
}

// writesRefused is checkWrites' error: the store answers reads.
type writesRefused struct{ err error }

func (e writesRefused) Error() string { return "the store refuses writes: " + e.err.Error() }
func (e writesRefused) Unwrap() error { return e.err }

// unavailableReason is what /readyz and the API's 503 say when the store
// does not answer, to anyone: the store's error stays in the log.
const unavailableReason = "database unavailable"
