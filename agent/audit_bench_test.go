package agent

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/store/sqlite"
)

// BenchmarkAuditRecord records b.N calls' records through an agent on a
// SQLite file and writes them, in batches of 500: cpu-ns/op is the
// process's CPU (the flusher's writes included) per record, what the
// audit log costs a call.
func BenchmarkAuditRecord(b *testing.B) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "audit.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	a, err := Open(ctx, st, "bench", "audit", nil)
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close(ctx)
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}
	cpu := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	b.ReportAllocs()
	b.ResetTimer()
	c0 := cpu()
	for i := range b.N {
		a.auditCalled(ctx, "up", "echo", map[string]any{"text": "hi"}, time.Now(), res, nil)
		if i%500 == 499 { // batches of 500, as 5,000 calls/s in 100ms windows give, and no drop
			a.audit.flush(ctx)
		}
	}
	a.audit.flush(ctx)
	b.ReportMetric(float64(cpu()-c0)/float64(b.N), "cpu-ns/op")
	b.StopTimer()
	last, err := a.Audit(ctx, AuditQuery{NewestFirst: true, Limit: 1})
	if err != nil || len(last) != 1 {
		b.Fatalf("the last record: %v, %v", last, err)
	}
	b.ReportMetric(float64(last[0].Seq)/float64(b.N), "written/op")
}
