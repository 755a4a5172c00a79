package agent

import (
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/agentmcp/agentmcp/internal/testing/oteltest"
	"github.com/agentmcp/agentmcp/store"
	"github.com/agentmcp/agentmcp/store/sqlite"
)

// TestAuditArgsCanonical: the arguments a map marshals to, which the
// recorder hashes without canonicalising them again, are their canonical
// JSON.
func TestAuditArgsCanonical(t *testing.T) {
	for _, args := range []map[string]any{
		{},
		{"z": 1, "a": "x<y&z", "m": map[string]any{"k2": []any{1.5, 1e21, nil, true}, "k1": json.Number("12.50")}},
		{"text": "h\u00e9llo \u2028", "n": 3.0, "neg": -0.25},
	} {
		v, canon := argsOf(args)
		if !canon {
			t.Fatalf("argsOf(%v) is not marked canonical", args)
		}
		want, err := canonicalArgs(args)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(v.(json.RawMessage)); got != string(want) {
			t.Errorf("argsOf(%v) = %s, canonical %s", args, got, want)
		}
	}
}

// gatedAudit is a real store whose audit appends wait for release.
type gatedAudit struct {
	store.Store
	as      store.AuditStore
	entered chan struct{}
	release chan struct{}
}

func (g *gatedAudit) AppendAudit(ctx context.Context, recs []store.AuditRecord) error {
	select {
	case g.entered <- struct{}{}:
	default:
	}
	<-g.release
	return g.as.AppendAudit(ctx, recs)
}

func (g *gatedAudit) QueryAudit(ctx context.Context, ns string, q store.AuditQuery) ([]store.AuditRecord, error) {
	return g.as.QueryAudit(ctx, ns, q)
}

func (g *gatedAudit) PruneAudit(ctx context.Context, ns string, keep int, before time.Time) (int64, error) {
	return g.as.PruneAudit(ctx, ns, keep, before)
}

// TestAuditFullBuffer: while the store does not answer, records fill the
// buffer and the calls go on: the records past it are dropped, counted
// in agentmcp.audit.dropped and logged once; the others are written once
// the store answers.
func TestAuditFullBuffer(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "audit.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	g := &gatedAudit{Store: st, as: st, entered: make(chan struct{}, 1), release: make(chan struct{})}
	rec := oteltest.New(t)
	var logs lockedLog
	a, err := Open(ctx, g, "test", "drops", &Options{MeterProvider: rec.MeterProvider, AuditWindow: time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(ctx)
	res := &mcp.CallToolResult{}
	a.auditCalled(ctx, "s", "echo", nil, time.Now(), res, nil)
	<-g.entered // the first record's write waits for the store
	const dropped = 100
	for range auditBuffer + dropped { // never blocks, though nothing is written
		a.auditCalled(ctx, "s", "echo", nil, time.Now(), res, nil)
	}
	close(g.release)
	recs, err := a.Audit(ctx, AuditQuery{NewestFirst: true, Limit: 1})
	if err != nil || len(recs) != 1 || recs[0].Seq != 1+auditBuffer {
		t.Fatalf("the last record: %+v, %v; want seq %d", recs, err, 1+auditBuffer)
	}
	var rm metricdata.ResourceMetrics
	if err := rec.Reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	if got := oteltest.IntValue(rm, "agentmcp.audit.dropped", nil); got != dropped {
		t.Errorf("agentmcp.audit.dropped = %d, want %d", got, dropped)
	}
	if n := strings.Count(logs.String(), "audit records dropped"); n != 1 {
		t.Errorf("the drops were logged %d times, want once:\n%s", n, logs.String())
	}
}

// lockedLog is a log's output, written from several goroutines.
type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
