// Package guard is what store/sqlite and store/postgres share around each
// operation: a deadline (store.DefaultTimeout unless configured), the
// marking of errors that mean the database cannot serve now with
// store.ErrUnavailable, and the record of refused writes (store.WriteHealth)
// with a rate-limited log of them.
//
// A backend method bounds its ctx, runs, classifies its error before
// wrapping it, and, for a write, reports the wrapped outcome:
//
//	ctx, cancel := s.g.Bound(ctx)
//	defer cancel()
//	if err := s.g.Err(ctx, s.put(ctx, ...)); err != nil {
//		return s.g.Failed(fmt.Errorf("sqlite: put ...: %w", err))
//	}
//	s.g.Wrote()
//
// Successful operations cost a deadline timer (none when the caller's own
// deadline is sooner) and, for writes, one atomic load.
package guard

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentmcp/agentmcp/store"
)

// LogInterval is the least time between two log lines of refused writes;
// the failures in between are counted in the next line.
const LogInterval = 10 * time.Second

// errNoAnswer is the cause of a Bound context whose deadline passed.
var errNoAnswer = errors.New("the database did not answer in time")

// Options configure a Guard.
type Options struct {
	// Timeout bounds each operation: zero means store.DefaultTimeout,
	// negative means no bound but the caller's.
	Timeout time.Duration
	// Logger receives the refused writes, at most one line per
	// LogInterval, and the first write that goes through after them. Nil
	// discards them.
	Logger *slog.Logger
	// Unavailable reports whether a backend error means the database
	// cannot serve now (connection lost, disk full, shutting down). Nil
	// means none does (only a passed deadline marks an error).
	Unavailable func(error) bool
	// Now is the clock of the log's rate limit; nil means time.Now.
	Now func() time.Time
}

// Guard bounds, classifies and records a Store's operations. It is safe
// for concurrent use.
type Guard struct {
	timeout     time.Duration
	logger      *slog.Logger
	unavailable func(error) bool
	now         func() time.Time

	failed   atomic.Uint64
	refusing atomic.Pointer[error] // the last refused write's error; nil once one went through

	// logMu guards the rate limit of the log.
	logMu      sync.Mutex
	loggedAt   time.Time
	suppressed uint64 // refused writes not logged since loggedAt
	outage     uint64 // refused writes since the last one that went through
}

// New returns a Guard with the options o.
func New(o Options) *Guard {
	g := &Guard{timeout: o.Timeout, logger: o.Logger, unavailable: o.Unavailable, now: o.Now}
	if g.timeout == 0 {
		g.timeout = store.DefaultTimeout
	}
	if g.logger == nil {
		g.logger = slog.New(slog.DiscardHandler)
	}
	if g.now == nil {
		g.now = time.Now
	}
	return g
}

// Timeout returns the deadline of one operation; negative means none.
func (g *Guard) Timeout() time.Duration { return g.timeout }

func nothing() {}

// Bound returns ctx with the operation's deadline, unless ctx ends sooner
// anyway, and its cancel function, which the caller must call.
func (g *Guard) Bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if g.timeout < 0 {
		return ctx, nothing
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= g.timeout {
		return ctx, nothing
	}
	return context.WithTimeoutCause(ctx, g.timeout, errNoAnswer)
}

// Err returns err marked with store.ErrUnavailable when ctx (from Bound)
// passed its deadline, in place of the context's error (the caller's own
// deadline did not pass: its ctx error would mislead), or when the backend
// says err means the database cannot serve now. A caller that went away
// (its ctx cancelled or past its own deadline) gets err as it is.
func (g *Guard) Err(ctx context.Context, err error) error {
	switch {
	case err == nil || errors.Is(err, store.ErrUnavailable):
		return err
	case ctx.Err() != nil:
		if context.Cause(ctx) == errNoAnswer {
			return fmt.Errorf("%w: no answer within %v", store.ErrUnavailable, g.timeout)
		}
		return err
	case g.unavailable != nil && g.unavailable(err):
		return fmt.Errorf("%w: %w", store.ErrUnavailable, err)
	}
	return err
}

// Wrote notes a write that went through: the database accepts writes.
func (g *Guard) Wrote() {
	if g.refusing.Load() == nil {
		return
	}
	if g.refusing.Swap(nil) == nil {
		return
	}
	g.logMu.Lock()
	n := g.outage
	g.outage, g.suppressed = 0, 0
	g.logMu.Unlock()
	g.logger.Info("store writes go through again", "refused", n)
}

// Failed notes the failure of a write, err as the backend returns it
// (classified by Err, then wrapped), and returns err. Only a failure
// marked store.ErrUnavailable is a refused write: counted, kept as the
// reason the database refuses writes until one goes through, and logged
// (at most once per LogInterval; the line counts the ones not logged).
func (g *Guard) Failed(err error) error {
	if !errors.Is(err, store.ErrUnavailable) {
		return err
	}
	g.failed.Add(1)
	g.refusing.Store(&err)
	g.logMu.Lock()
	g.outage++
	now := g.now()
	if !g.loggedAt.IsZero() && now.Sub(g.loggedAt) < LogInterval && now.Sub(g.loggedAt) >= 0 {
		g.suppressed++
		g.logMu.Unlock()
		return err
	}
	g.loggedAt = now
	n := g.suppressed
	g.suppressed = 0
	g.logMu.Unlock()
	g.logger.Warn("store write refused", "error", err, "unlogged_since_last", n, "total", g.failed.Load())
	return err
}

// WriteHealth implements store.WriteHealth.
func (g *Guard) WriteHealth() (failed uint64, refusing error) {
	if p := g.refusing.Load(); p != nil {
		refusing = *p
	}
	return g.failed.Load(), refusing
}
