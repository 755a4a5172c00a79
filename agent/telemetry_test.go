package agent_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/agentmcp/agentmcp/internal/testing/oteltest"
	"github.com/agentmcp/agentmcp/store"
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

// TestHostMetricsStoreWrites: with a store that counts its refused writes,
// the host reports them (agentmcp.store.write_failures) and whether the
// store refuses writes now (agentmcp.store.refusing_writes): an add on a
// SQLite database whose file system (a small tmpfs) is full is one, and
// refusing turns 0 once an add goes through with room again.
func TestHostMetricsStoreWrites(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "disk")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=4194304"); err != nil {
		t.Skipf("cannot mount a tmpfs for a full file system: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	st := openSQLite(t, filepath.Join(dir, "agent.db"))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	h, _ := newHost(t, st, &agent.HostOptions{Agent: &agent.Options{MeterProvider: mp}})
	a, release := use(t, h, "one")
	defer release()
	up := serve(t, mcptest.Stateless)
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
	if got := values(); got["agentmcp.store.write_failures"] != 0 || got["agentmcp.store.refusing_writes"] != 0 {
		t.Errorf("before any refused write: %v", got)
	}

	filler := filepath.Join(dir, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	for buf := make([]byte, 4096); ; {
		if _, err := f.Write(buf); err != nil {
			break
		}
	}
	f.Close()
	_, err = a.AddMCPServer(testCtx(t), "up", up.URL, nil)
	if !errors.Is(err, store.ErrUnavailable) || !errors.Is(err, agent.ErrStorage) {
		t.Fatalf("add on a full disk: %v; want ErrStorage and store.ErrUnavailable", err)
	}
	if got := values(); got["agentmcp.store.write_failures"] != 1 || got["agentmcp.store.refusing_writes"] != 1 {
		t.Errorf("after a refused add: %v; want 1 failure, refusing", got)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if _, err := a.AddMCPServer(testCtx(t), "up", up.URL, nil); err != nil {
		t.Fatal(err)
	}
	if got := values(); got["agentmcp.store.write_failures"] != 1 || got["agentmcp.store.refusing_writes"] != 0 {
		t.Errorf("after an add went through: %v; want 1 failure, not refusing", got)
	}
}
