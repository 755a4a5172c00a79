package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/store"
)

// BenchmarkAppendAudit appends batches of 1000 call records to a file
// database: the audit log's write, per record.
func BenchmarkAppendAudit(b *testing.B) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(b.TempDir(), "audit.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const batch = 1000
	recs := make([]store.AuditRecord, batch)
	at := time.Now()
	for i := range recs {
		recs[i] = store.AuditRecord{Namespace: "bench/a", Time: at, ServerID: "up", ServerName: "up", Tool: "echo",
			Caller: "api", Decision: store.AuditAllowed, Outcome: store.AuditOK, Duration: time.Millisecond,
			ArgumentsHash: fmt.Sprintf("%064x", i)}
	}
	cpu := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	b.ResetTimer()
	c0 := cpu()
	for i := 0; i < b.N; i += batch {
		if err := s.AppendAudit(ctx, recs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpu()-c0)/float64(b.N), "cpu-ns/op")
}
