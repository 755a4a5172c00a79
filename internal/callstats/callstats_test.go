package callstats_test

import (
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agentmcp/agentmcp/internal/callstats"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestQuantiles: p50 and p95 of known latencies are those
// Prometheus's histogram_quantile computes from the same buckets
// (interpolated within the bucket, an upper bound inclusive, the bucket
// above 300 s read as 300 s).
func TestQuantiles(t *testing.T) {
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	tests := []struct {
		name     string
		calls    map[time.Duration]int // latency -> calls
		p50, p95 time.Duration
	}{
		{"none", nil, 0, 0},
		{"one call of 3 ms", map[time.Duration]int{ms(3): 1}, ms(3.5), ms(4.85)},
		{"sub-millisecond", map[time.Duration]int{ms(0.2): 10}, ms(0.5), ms(0.95)},
		// 10 ms is in the bucket (5 ms, 10 ms]: upper bounds are inclusive,
		// as the OpenTelemetry SDK places a measurement.
		{"on a bound", map[time.Duration]int{ms(10): 4}, ms(7.5), ms(9.75)},
		// rank 50 of 100 is the 50th of the 90 in (10 ms, 20 ms]; rank 95
		// the 5th of the 10 in (200 ms, 500 ms].
		{"two groups", map[time.Duration]int{ms(15): 90, ms(400): 10}, ms(10 + 10*50.0/90), ms(350)},
		{"slow tail", map[time.Duration]int{ms(3): 95, 3 * time.Second: 5}, ms(2 + 3*50.0/95), ms(5)},
		{"beyond the last bound", map[time.Duration]int{400 * time.Second: 3}, 300 * time.Second, 300 * time.Second},
	}
	now := time.Unix(1_800_000_000, 0)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s callstats.Window
			total := 0
			for d, n := range tt.calls {
				for range n {
					s.Record(now, d, false)
				}
				total += n
			}
			got := s.Snapshot(now)
			want := callstats.Figures{Calls: int64(total), TotalCalls: int64(total),
				P50: tt.p50.Round(time.Microsecond), P95: tt.p95.Round(time.Microsecond)}
			if got != want {
				t.Errorf("stats = %+v; want %+v", got, want)
			}
		})
	}
}

// TestWindow: the windowed figures count the calls of the
// current minute and the four before it; older minutes drop out (their
// slots reused), the totals keep everything; errors are counted apart.
func TestWindow(t *testing.T) {
	t0 := time.Unix(60*29_000_000, 0) // the start of a minute
	var s callstats.Window
	for i := range 3 {
		s.Record(t0.Add(10*time.Second), 3*time.Millisecond, i == 0)
	}
	for range 2 {
		s.Record(t0.Add(2*time.Minute+59*time.Second), 15*time.Millisecond, true)
	}
	check := func(at time.Duration, calls, errors, total, totalErrors int64) {
		t.Helper()
		got := s.Snapshot(t0.Add(at))
		if got.Calls != calls || got.Errors != errors || got.TotalCalls != total || got.TotalErrors != totalErrors {
			t.Errorf("at t0+%v: calls %d errors %d, total %d/%d; want %d %d, %d/%d",
				at, got.Calls, got.Errors, got.TotalCalls, got.TotalErrors, calls, errors, total, totalErrors)
		}
	}
	check(2*time.Minute+59*time.Second, 5, 3, 5, 3)
	check(4*time.Minute+59*time.Second, 5, 3, 5, 3) // t0's minute is the oldest counted
	check(5*time.Minute, 2, 2, 5, 3)                // t0's minute dropped out
	check(6*time.Minute+59*time.Second, 2, 2, 5, 3)
	check(7*time.Minute, 0, 0, 5, 3)
	if got := s.Snapshot(t0.Add(7 * time.Minute)); got.P50 != 0 || got.P95 != 0 {
		t.Errorf("empty window: %+v", got)
	}

	// A call at t0+5m reuses t0's slot: the old minute's counts go.
	s.Record(t0.Add(5*time.Minute), time.Millisecond, false)
	check(5*time.Minute, 3, 2, 6, 3)
	// A clock that went back does not count the future.
	check(-time.Minute, 0, 0, 6, 3)
}

// BenchmarkRecord is what a tool call pays for its server's figures
// (mcpclient records each in its server's Window): one record, in a minute already started (the common case),
// alone and from concurrent callers of one server.
func BenchmarkRecord(b *testing.B) {
	now := time.Unix(1_800_000_000, 0)
	b.Run("seq", func(b *testing.B) {
		var s callstats.Window
		b.ReportAllocs()
		for b.Loop() {
			s.Record(now, 3*time.Millisecond, false)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		var s callstats.Window
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				s.Record(now, 3*time.Millisecond, false)
			}
		})
	})
}
