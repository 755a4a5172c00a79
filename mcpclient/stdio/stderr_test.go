package stdio_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/agentmcp/agentmcp/mcpclient/stdio"
)

// recorder is a slog.Handler that keeps the records it is given.
type recorder struct {
	mu      sync.Mutex
	records []slog.Record
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *recorder) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *recorder) WithGroup(string) slog.Handler            { return r }
func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.records = append(r.records, rec)
	return nil
}

// TestStderrRateLimited: a server that floods its stderr gets a burst of
// its lines logged, not all of them; the rest are counted, and every line
// is either logged or in a count of dropped ones once the process ended.
// The last lines are still in Output.
func TestStderrRateLimited(t *testing.T) {
	rec := &recorder{}
	tr := &stdio.Transport{Command: serverCmd("flood"), Logger: slog.New(rec)}
	session, err := newClient().Connect(testCtx(t), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := session.Close(); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	logged, dropped := 0, int64(0)
	for _, r := range rec.records {
		switch {
		case r.Message == "mcp server stderr":
			logged++
		case strings.Contains(r.Message, "not logged"):
			r.Attrs(func(a slog.Attr) bool {
				if a.Key == "dropped" {
					dropped += a.Value.Int64()
				}
				return true
			})
		}
	}
	if logged > floodLines/10 {
		t.Errorf("%d of the %d stderr lines logged; want a bounded few", logged, floodLines)
	}
	if logged < stdio.DefaultLineBurst {
		t.Errorf("%d lines logged; want at least the burst of %d", logged, 200)
	}
	if int64(logged)+dropped != floodLines {
		t.Errorf("%d lines logged and %d counted as dropped; want %d in all", logged, dropped, floodLines)
	}
	if out := tr.Output(); !strings.Contains(out, "flood line 19999") {
		t.Errorf("Output = %q; want the last line", out)
	}
}
