package mcpclient

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/agentmcp/agentmcp/internal/mcptest"
	"github.com/agentmcp/agentmcp/internal/oteltest"
)

// TestServerStatsQuantiles: p50 and p95 of known latencies are those
// Prometheus's histogram_quantile computes from the same buckets
// (interpolated within the bucket, an upper bound inclusive, the bucket
// above 300 s read as 300 s).
func TestServerStatsQuantiles(t *testing.T) {
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
			var s serverStats
			total := 0
			for d, n := range tt.calls {
				for range n {
					s.record(now, d, false)
				}
				total += n
			}
			got := s.snapshot(now)
			want := ServerStats{Calls: int64(total), TotalCalls: int64(total),
				P50: tt.p50.Round(time.Microsecond), P95: tt.p95.Round(time.Microsecond)}
			if got != want {
				t.Errorf("stats = %+v; want %+v", got, want)
			}
		})
	}
}

// TestServerStatsWindow: the windowed figures count the calls of the
// current minute and the four before it; older minutes drop out (their
// slots reused), the totals keep everything; errors are counted apart.
func TestServerStatsWindow(t *testing.T) {
	t0 := time.Unix(60*29_000_000, 0) // the start of a minute
	var s serverStats
	for i := range 3 {
		s.record(t0.Add(10*time.Second), 3*time.Millisecond, i == 0)
	}
	for range 2 {
		s.record(t0.Add(2*time.Minute+59*time.Second), 15*time.Millisecond, true)
	}
	check := func(at time.Duration, calls, errors, total, totalErrors int64) {
		t.Helper()
		got := s.snapshot(t0.Add(at))
		if got.Calls != calls || got.Errors != errors || got.TotalCalls != total || got.TotalErrors != totalErrors {
			t.Errorf("at t0+%v: calls %d errors %d, total %d/%d; want %d %d, %d/%d",
				at, got.Calls, got.Errors, got.TotalCalls, got.TotalErrors, calls, errors, total, totalErrors)
		}
		if rate := got.ErrorRate(); calls > 0 && rate != float64(errors)/float64(calls) {
			t.Errorf("at t0+%v: error rate %v", at, rate)
		}
	}
	check(2*time.Minute+59*time.Second, 5, 3, 5, 3)
	check(4*time.Minute+59*time.Second, 5, 3, 5, 3) // t0's minute is the oldest counted
	check(5*time.Minute, 2, 2, 5, 3)                // t0's minute dropped out
	check(6*time.Minute+59*time.Second, 2, 2, 5, 3)
	check(7*time.Minute, 0, 0, 5, 3)
	if got := s.snapshot(t0.Add(7 * time.Minute)); got.P50 != 0 || got.P95 != 0 || got.ErrorRate() != 0 {
		t.Errorf("empty window: %+v, error rate %v", got, got.ErrorRate())
	}

	// A call at t0+5m reuses t0's slot: the old minute's counts go.
	s.record(t0.Add(5*time.Minute), time.Millisecond, false)
	check(5*time.Minute, 3, 2, 6, 3)
	// A clock that went back does not count the future.
	check(-time.Minute, 0, 0, 6, 3)
}

// TestServerStatsAgreeWithInstrument: the figures of a server's tool
// calls are those mcp.client.operation.duration records for it: the same
// count, the same failures (a tool result with isError and a JSON-RPC
// error), the same buckets (ours split the instrument's first one), and
// other requests (the handshake, lists, prompts) count in neither. Two
// Managers (two agents) with a server of the same id each keep their own
// figures, which the instrument's series by server id cannot tell apart.
func TestServerStatsAgreeWithInstrument(t *testing.T) {
	rec := oteltest.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	managers := make([]*Manager, 2)
	for i := range managers {
		m := New(&Options{TracerProvider: rec.TracerProvider, MeterProvider: rec.MeterProvider})
		t.Cleanup(func() { m.Close(context.Background()) })
		srv := mcptest.NewServer("stats")
		in := func(context.Context, map[string]any) (*mcp.Server, error) { return srv.Server, nil }
		if _, err := m.RegisterServer(ctx, "github", ServerOptions{InProcess: in}); err != nil {
			t.Fatal(err)
		}
		if res, err := m.ConnectToServer(ctx, "github"); err != nil || res.State != StateConnected {
			t.Fatalf("connect: %+v %v", res, err)
		}
		if d, err := m.DiscoverIfConnected(ctx, "github", nil); err != nil || !d.Success {
			t.Fatalf("discover: %+v %v", d, err)
		}
		managers[i] = m
	}
	a, b := managers[0], managers[1]
	for range 7 {
		if _, err := a.CallTool(ctx, "github", "echo", map[string]any{"text": "hi"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		if res, err := a.CallTool(ctx, "github", "fail", nil, nil); err != nil || !res.IsError {
			t.Fatalf("fail: %+v %v", res, err)
		}
	}
	for range 2 {
		if _, err := a.CallTool(ctx, "github", "no-such-tool", nil, nil); err == nil {
			t.Fatal("an unknown tool succeeded")
		}
	}
	if _, err := a.GetPrompt(ctx, "github", "greet", map[string]string{"name": "x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.CallTool(ctx, "github", "fail", nil, nil); err != nil {
		t.Fatal(err)
	}

	var rm metricdata.ResourceMetrics
	if err := rec.Reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	// The instrument's tools/call series of "github": both Managers'.
	var otelCount, otelErrors uint64
	otelBuckets := make([]uint64, len(durationBuckets)+1)
	for _, sm := range rm.ScopeMetrics {
		for _, mt := range sm.Metrics {
			h, ok := mt.Data.(metricdata.Histogram[float64])
			if !ok || mt.Name != "mcp.client.operation.duration" {
				continue
			}
			for _, dp := range h.DataPoints {
				attrs := oteltest.AttrMap(dp.Attributes.ToSlice())
				if attrs["mcp.method.name"] != "tools/call" || attrs["agentmcp.server.id"] != "github" {
					continue
				}
				if !slices.Equal(dp.Bounds, durationBuckets) {
					t.Fatalf("instrument bounds %v; want %v", dp.Bounds, durationBuckets)
				}
				otelCount += dp.Count
				if attrs["error.type"] != "" {
					otelErrors += dp.Count
				}
				for i, n := range dp.BucketCounts {
					otelBuckets[i] += n
				}
			}
		}
	}

	sa, ok := a.ServerStats("github")
	if !ok {
		t.Fatal("no stats for github")
	}
	sb, _ := b.ServerStats("github")
	if want := (ServerStats{Calls: 12, Errors: 5, TotalCalls: 12, TotalErrors: 5}); sa.Calls != want.Calls || sa.Errors != want.Errors ||
		sa.TotalCalls != want.TotalCalls || sa.TotalErrors != want.TotalErrors {
		t.Errorf("agent a's github: %+v; want calls 12, errors 5 (3 isError, 2 JSON-RPC errors)", sa)
	}
	if sb.Calls != 1 || sb.Errors != 1 {
		t.Errorf("agent b's github: %+v; want 1 call, 1 error", sb)
	}
	if got := uint64(sa.TotalCalls + sb.TotalCalls); got != otelCount {
		t.Errorf("calls: stats %d; the instrument %d", got, otelCount)
	}
	if got := uint64(sa.TotalErrors + sb.TotalErrors); got != otelErrors {
		t.Errorf("errors: stats %d; the instrument (with error.type) %d", got, otelErrors)
	}
	// Our buckets, merged into the instrument's: the same counts.
	ours := make([]uint64, len(durationBuckets)+1)
	for _, m := range managers {
		c, err := m.lookup("github")
		if err != nil {
			t.Fatal(err)
		}
		c.stats.mu.Lock()
		for _, slot := range c.stats.w.slots {
			for i, n := range slot.buckets {
				j := max(0, i-(len(statsBounds)-len(durationBuckets)))
				ours[j] += uint64(n)
			}
		}
		c.stats.mu.Unlock()
	}
	if !slices.Equal(ours, otelBuckets) {
		t.Errorf("buckets: stats %v; the instrument %v", ours, otelBuckets)
	}
	if sa.P50 <= 0 || sa.P95 < sa.P50 {
		t.Errorf("p50 %v, p95 %v; want 0 < p50 <= p95", sa.P50, sa.P95)
	}

	if _, ok := a.ServerStats("nope"); ok {
		t.Error("stats for a server never registered")
	}
}

// TestStatsBoundsRefineTheInstrument: the figures' bucket bounds are the
// instrument's, with finer ones below its first.
func TestStatsBoundsRefineTheInstrument(t *testing.T) {
	extra := len(statsBounds) - len(durationBuckets)
	if !slices.Equal(statsBounds[extra:], durationBuckets) || !slices.IsSorted(statsBounds[:]) || statsBounds[extra-1] >= durationBuckets[0] {
		t.Errorf("bounds %v do not refine %v", statsBounds, durationBuckets)
	}
}

// BenchmarkServerStatsRecord is what a tool call pays for its server's
// figures: one record, in a minute already started (the common case),
// alone and from concurrent callers of one server.
func BenchmarkServerStatsRecord(b *testing.B) {
	now := time.Unix(1_800_000_000, 0)
	b.Run("seq", func(b *testing.B) {
		var s serverStats
		b.ReportAllocs()
		for b.Loop() {
			s.record(now, 3*time.Millisecond, false)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		var s serverStats
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				s.record(now, 3*time.Millisecond, false)
			}
		})
	})
}
