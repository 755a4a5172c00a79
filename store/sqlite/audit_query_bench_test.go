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

// BenchmarkQueryAudit reads a page of 100 records newest first from a
// log of 100,000 (appended in batches of 500, as an agent's flusher
// does): the newest page ("newest"), the page before a cursor in the
// middle ("cursor"), and a page of a tool one record in 100 is of
// ("selective", which reads the whole log to find them), per page, in wall and CPU time.
func BenchmarkQueryAudit(b *testing.B) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(b.TempDir(), "audit.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const total, batch = 100_000, 500
	at := time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)
	recs := make([]store.AuditRecord, batch)
	for i := 0; i < total; i += batch {
		for k := range recs {
			tool := "echo"
			if (i+k)%100 == 0 {
				tool = "rare"
			}
			recs[k] = store.AuditRecord{Namespace: "bench/a", Time: at.Add(time.Duration(i+k) * time.Millisecond), ServerID: "up", ServerName: "up",
				Tool: tool, Caller: "api", Decision: store.AuditAllowed, Outcome: store.AuditOK, Duration: time.Millisecond,
				ArgumentsHash: fmt.Sprintf("%064x", i+k)}
		}
		if err := s.AppendAudit(ctx, recs); err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range []struct {
		name string
		q    store.AuditQuery
	}{
		{"newest", store.AuditQuery{NewestFirst: true, Limit: 100}},
		{"cursor", store.AuditQuery{NewestFirst: true, Limit: 100, Cursor: total / 2}},
		{"selective", store.AuditQuery{NewestFirst: true, Limit: 100, Tool: "rare"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			c0 := processCPU()
			for b.Loop() {
				got, err := s.QueryAudit(ctx, "bench/a", c.q)
				if err != nil {
					b.Fatal(err)
				}
				if len(got) != 100 {
					b.Fatalf("%d records, want 100", len(got))
				}
			}
			b.ReportMetric(float64(processCPU()-c0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// processCPU is the process's CPU time so far (getrusage): on a shared
// machine, steadier than the wall time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
