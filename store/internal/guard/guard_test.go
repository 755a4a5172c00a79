package guard

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/store"
)

type lines struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lines) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := strings.TrimSpace(l.b.String())
	l.b.Reset()
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// TestFailedLogged: refused writes are counted, each time; logged at most
// once per LogInterval, the next line counting those not logged; a write
// that goes through clears the refusal and says so once. Other failures
// are neither counted nor logged.
func TestFailedLogged(t *testing.T) {
	var out lines
	now := time.Unix(1e9, 0)
	g := New(Options{Logger: slog.New(slog.NewTextHandler(&out, nil)), Now: func() time.Time { return now }})
	refused := fmt.Errorf("sqlite: put server: %w: disk full", store.ErrUnavailable)

	g.Failed(errors.New("sqlite: put server: invalid id"))
	if n, r := g.WriteHealth(); n != 0 || r != nil || out.take() != nil {
		t.Fatalf("a failure that is not a refusal: %d, %v", n, r)
	}
	for range 5 {
		g.Failed(refused)
	}
	if got := out.take(); len(got) != 1 || !strings.Contains(got[0], "store write refused") || !strings.Contains(got[0], "unlogged_since_last=0") {
		t.Errorf("5 refusals at once logged %q; want one line", got)
	}
	now = now.Add(LogInterval)
	g.Failed(refused)
	if got := out.take(); len(got) != 1 || !strings.Contains(got[0], "unlogged_since_last=4") || !strings.Contains(got[0], "total=6") {
		t.Errorf("the next refusal after LogInterval logged %q; want one line counting 4 unlogged, 6 in all", got)
	}
	if n, r := g.WriteHealth(); n != 6 || !errors.Is(r, store.ErrUnavailable) {
		t.Errorf("WriteHealth: %d, %v", n, r)
	}
	g.Wrote()
	g.Wrote()
	if got := out.take(); len(got) != 1 || !strings.Contains(got[0], "go through again") || !strings.Contains(got[0], "refused=6") {
		t.Errorf("writes going through again logged %q; want one line", got)
	}
	if n, r := g.WriteHealth(); n != 6 || r != nil {
		t.Errorf("WriteHealth after a write went through: %d, %v", n, r)
	}
}

// TestBound: a bound context that passes its deadline makes the error
// ErrUnavailable (and not the caller's deadline); a caller's own sooner
// deadline or cancellation leaves the error as it is.
func TestBound(t *testing.T) {
	g := New(Options{Timeout: time.Millisecond})
	ctx, cancel := g.Bound(context.Background())
	defer cancel()
	<-ctx.Done()
	err := g.Err(ctx, ctx.Err())
	if !errors.Is(err, store.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the store's deadline: %v; want ErrUnavailable only", err)
	}
	caller, ccancel := context.WithCancel(context.Background())
	ctx, cancel = g.Bound(caller)
	defer cancel()
	ccancel()
	if err := g.Err(ctx, ctx.Err()); !errors.Is(err, context.Canceled) || errors.Is(err, store.ErrUnavailable) {
		t.Errorf("the caller's cancellation: %v; want context.Canceled", err)
	}
	g = New(Options{Timeout: time.Hour, Unavailable: func(err error) bool { return err.Error() == "down" }})
	ctx, cancel = g.Bound(context.Background())
	defer cancel()
	if err := g.Err(ctx, errors.New("down")); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("a backend's unavailable error: %v", err)
	}
	if err := g.Err(ctx, errors.New("constraint")); errors.Is(err, store.ErrUnavailable) {
		t.Errorf("another error: %v", err)
	}
}
