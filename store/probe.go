package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Bounds of a Probe: a query that takes longer than ProbeTimeout says the
// store does not answer, and an answer is reused for ProbeTTL, so that
// probes at any rate (readiness checks, scrapes) cost the store at most
// one query a second.
const (
	ProbeTimeout = 2 * time.Second
	ProbeTTL     = time.Second
)

// ErrWritesRefused is wrapped by Probe.Check's error when the store answers
// reads but refuses writes.
var ErrWritesRefused = errors.New("the store refuses writes")

// ProbeOptions configures a Probe. The zero value, or nil, gives the
// defaults each field documents.
type ProbeOptions struct {
	// Logger receives a warning, with the store's error, for each query
	// that fails. Nil discards.
	Logger *slog.Logger

	// Now is the clock answers age by. Nil means time.Now.
	Now func() time.Time
}

// Probe tells whether a store answers and accepts writes, for a readiness
// check: it asks the store a cheap question and reuses the answer for
// ProbeTTL. A failed query is logged with the store's error, which may
// name the database, its host and its user: that detail is for the log
// only, never for an answer to a client.
//
// A Probe is safe for concurrent use: concurrent callers share one query,
// the others waiting for it.
type Probe struct {
	st     Store
	now    func() time.Time
	logger *slog.Logger

	// mu is held during a query, and guards the fields below.
	mu  sync.Mutex
	at  time.Time // when err was learnt; zero before the first query
	err error
}

// NewProbe returns a Probe of st. opts may be nil; it is not kept.
func NewProbe(st Store, opts *ProbeOptions) *Probe {
	p := &Probe{st: st, now: time.Now, logger: slog.New(slog.DiscardHandler)}
	if opts != nil {
		if opts.Now != nil {
			p.now = opts.Now
		}
		if opts.Logger != nil {
			p.logger = opts.Logger
		}
	}
	return p
}

// Check returns nil when the store answers and accepts writes, asking it
// unless an answer younger than ProbeTTL is at hand. Its error is the
// store's, or wraps ErrWritesRefused while the store answers reads but its
// last write was refused (WriteHealth) and a write of the probe's own (a
// key that expires at once) is refused too. A store that accepts writes
// costs one read. The query does not end with ctx (a caller that goes away
// does not make the answer an error), but after ProbeTimeout.
func (p *Probe) Check(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.at.IsZero() {
		if age := p.now().Sub(p.at); age >= 0 && age < ProbeTTL {
			return p.err
		}
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ProbeTimeout)
	defer cancel()
	_, p.err = p.st.ListServers(ctx, "agentmcp/readyz")
	if p.err == nil {
		p.err = p.checkWrites(ctx)
	}
	p.at = p.now()
	if p.err != nil {
		p.logger.Warn("the store does not answer", "error", p.err)
	}
	return p.err
}

// checkWrites returns why the store refuses writes, or nil.
func (p *Probe) checkWrites(ctx context.Context) error {
	wh, ok := p.st.(WriteHealth)
	if !ok {
		return nil
	}
	if _, refusing := wh.WriteHealth(); refusing == nil {
		return nil
	}
	if err := p.st.KVPut(ctx, "agentmcp/readyz", "probe", "write", []byte{1}, time.Now()); err != nil {
		return fmt.Errorf("%w: %w", ErrWritesRefused, err)
	}
	return nil
}
