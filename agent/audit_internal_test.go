package agent

import (
	"context"
	"encoding/json"
	"log/slog"
	"math"
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

// TestAuditArgsCanonical: a map of plain JSON values is kept as its
// canonical JSON on the call's path (written without reflection), the
// same as canonicalArgs makes of it (what the flusher makes of any other
// arguments), so are its hash and the arguments kept when the policy
// asks: nested values, numbers of every Go type, escapes, unicode. Maps
// that hold other values (structs, typed maps and slices,
// json.RawMessage, invalid UTF-8) are left to the flusher, with the same
// outcome.
func TestAuditArgsCanonical(t *testing.T) {
	type point struct {
		Y string `json:"y,omitempty"`
		X int    `json:"x"`
	}
	for _, tt := range []struct {
		args  map[string]any
		plain bool // made canonical on the call's path
	}{
		{nil, true},
		{map[string]any{}, true},
		{map[string]any{"z": 1, "a": "x<y&z>", "m": map[string]any{"k2": []any{1.5, 1e21, 1e-7, nil, true, math.Copysign(0, -1)}, "k1": json.Number("12.50")}}, true},
		{map[string]any{"text": "h\u00e9llo \u2028 \u2029 \U0001F600 \u65e5\u672c \ufffd", "n": 3.0, "neg": -0.25, "big": uint64(1 << 63), "f32": float32(0.1)}, true},
		{map[string]any{"ints": []any{int8(-8), int16(16), int32(-32), int64(1 << 62), uint8(8), uint16(16), uint32(32), uint(7), 42}}, true},
		{map[string]any{"esc": "quote \" back \\ nl \n tab \t ctl \x01 \x1f del \x7f", "key\u00e9<&>": false, "lit": `\ufffd`}, false},
		{map[string]any{"deep": map[string]any{"a": map[string]any{"b": map[string]any{"c": []any{map[string]any{"d": "e"}}}}}}, true},
		{map[string]any{"bad": "\xff\xfe"}, false},
		{map[string]any{"raw": json.RawMessage(` { "b" : [1, 2] , "a" : "<x>" } `)}, false},
		{map[string]any{"struct": point{X: 1, Y: "&"}, "ptr": &point{Y: "y"}}, false},
		{map[string]any{"typed": map[string]int{"b": 2, "a": 1}, "strs": []string{"<", "b"}, "bytes": []byte("hi")}, false},
		{map[string]any{"in a slice": []any{1, point{X: 2}}}, false},
	} {
		for _, full := range []bool{false, true} {
			e := auditEntry{call: true, full: full}
			e.setArgs(tt.args)
			if (e.canon != nil) != tt.plain {
				t.Errorf("%v: made canonical on the call's path %s, want %v", tt.args, e.canon, tt.plain)
			}
			want, err := canonicalArgs(tt.args)
			if err != nil {
				t.Fatal(err)
			}
			hash, kept := e.hash()
			if hash != hashArgs(want) {
				t.Errorf("hash of %v = %s, want that of %s", tt.args, hash, want)
			}
			if full && string(kept) != string(want) || !full && kept != nil {
				t.Errorf("arguments kept (full %v): %s, want %s", full, kept, want)
			}
		}
	}
}

// TestAuditArgsSameHash: the same arguments get the same hash whatever
// their key order, the Go types of their numbers, or their form (a map,
// JSON as given with spaces, a struct).
func TestAuditArgsSameHash(t *testing.T) {
	type args struct {
		B []int   `json:"b"`
		A float64 `json:"a"`
		C string  `json:"c"`
	}
	want := hashArgs(json.RawMessage("{\"a\":1,\"b\":[2,3],\"c\":\"\\u003c\u00e9\\u003e\"}")) // <, > escaped, é as is
	for _, v := range []any{
		map[string]any{"c": "<\u00e9>", "b": []any{2, 3}, "a": 1},
		map[string]any{"a": 1.0, "b": []any{int64(2), uint8(3)}, "c": "<\u00e9>"},
		map[string]any{"a": json.Number("1"), "b": []int{2, 3}, "c": "<\u00e9>"},
		json.RawMessage(` {"c": "<\u00e9>", "b": [2, 3], "a": 1} `),
		[]byte(`{"b":[2,3],"a":1,"c":"\u003c\u00e9\u003e"}`),
		args{B: []int{2, 3}, A: 1, C: "<\u00e9>"},
	} {
		e := auditEntry{call: true}
		e.setArgs(v)
		if got, _ := e.hash(); got != want {
			t.Errorf("hash of %#v = %s, want %s", v, got, want)
		}
	}
}

// TestAuditArgsUnmarshalable: a map that does not marshal (NaN) keeps
// no arguments (hashed as none, as canonicalArgs's error is).
func TestAuditArgsUnmarshalable(t *testing.T) {
	e := auditEntry{call: true}
	e.setArgs(map[string]any{"x": math.NaN()})
	if e.canon != nil || e.args != nil {
		t.Fatalf("an unmarshalable map: canonical %s, args %v", e.canon, e.args)
	}
}

// BenchmarkAuditArgs is a call's part of keeping a small map of
// arguments.
func BenchmarkAuditArgs(b *testing.B) {
	args := map[string]any{"text": "hello", "n": 3}
	b.ReportAllocs()
	for b.Loop() {
		var e auditEntry
		e.setArgs(args)
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
