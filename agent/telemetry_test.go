package agent_test

import (
	"context"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/internal/mcptest"
	"github.com/agentmcp/agentmcp/internal/oteltest"
)

// TestTelemetryOptions: the agent's TracerProvider and MeterProvider reach
// its Manager: a tool call through the agent is a span under the caller's,
// and mcp.client.operation.duration is recorded on the agent's meter.
func TestTelemetryOptions(t *testing.T) {
	rec := oteltest.New(t)
	spans, tp, reader, mp := rec.Spans, rec.TracerProvider, rec.Reader, rec.MeterProvider

	s := serve(t, mcptest.Stateless)
	a := openAgent(t, openSQLite(t, ""), "traced", &agent.Options{TracerProvider: tp, MeterProvider: mp})
	ctx, parent := tp.Tracer("test").Start(testCtx(t), "turn")
	res, err := a.AddMCPServer(ctx, "Test", s.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.CallTool(ctx, res.ID, "echo", map[string]any{"text": "x"}, nil); err != nil {
		t.Fatal(err)
	}
	parent.End()
	var call sdktrace.ReadOnlySpan
	for _, sp := range spans.Ended() {
		if sp.Name() == "tools/call echo" {
			call = sp
		}
	}
	if call == nil || call.Parent().SpanID() != parent.SpanContext().SpanID() {
		t.Fatalf("no tools/call echo span under the caller's (%d spans)", len(spans.Ended()))
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			found = found || m.Name == "mcp.client.operation.duration"
		}
	}
	if !found {
		t.Error("no mcp.client.operation.duration on the agent's meter provider")
	}
}

// TestHostMetrics: a host reports agents awake, wakes and hibernations on
// its agents' meter provider, and unregisters them when it closes.
func TestHostMetrics(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	h, _ := newHost(t, openSQLite(t, ""), &agent.HostOptions{Agent: &agent.Options{MeterProvider: mp}})
	_, release := use(t, h, "one")
	release()
	_, release = use(t, h, "two")
	release()
	if !h.Hibernate(testCtx(t), "test-agent", "one") {
		t.Fatal("one was not hibernated")
	}
	values := func() map[string]int64 {
		var rm metricdata.ResourceMetrics
		if err := reader.Collect(context.Background(), &rm); err != nil {
			t.Fatal(err)
		}
		out := map[string]int64{}
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				switch d := m.Data.(type) {
				case metricdata.Gauge[int64]:
					for _, dp := range d.DataPoints {
						out[m.Name] += dp.Value
					}
				case metricdata.Sum[int64]:
					for _, dp := range d.DataPoints {
						out[m.Name] += dp.Value
					}
				}
			}
		}
		return out
	}
	got := values()
	want := map[string]int64{"agentmcp.agents.awake": 1, "agentmcp.agent.wakes": 2, "agentmcp.agent.hibernations": 1}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %d; want %d (all: %v)", k, got[k], v, got)
		}
	}
	h.Close(context.Background())
	if got := values(); len(got) != 0 {
		t.Errorf("after Close, still reported: %v", got)
	}
}
