package mcpclient

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/agentmcp/agentmcp/internal/callstats"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/internal/testing/oteltest"
	"github.com/agentmcp/agentmcp/mcpclient/internal/telemetry"
)

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
	durationBuckets := telemetry.DurationBuckets()
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
	if got := sa.ErrorRate(); got != 5.0/12 {
		t.Errorf("agent a's github: error rate %v, want 5/12", got)
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
		for i, n := range c.stats.Buckets(m.clock.Now()) {
			j := max(0, i-(len(callstats.Bounds)-len(durationBuckets)))
			ours[j] += uint64(n)
		}
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
	bounds, durationBuckets := callstats.Bounds, telemetry.DurationBuckets()
	extra := len(bounds) - len(durationBuckets)
	if !slices.Equal(bounds[extra:], durationBuckets) || !slices.IsSorted(bounds[:]) || bounds[extra-1] >= durationBuckets[0] {
		t.Errorf("bounds %v do not refine %v", bounds, durationBuckets)
	}
}
