package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/store"
)

// TestAuditSeqContiguous: AppendAudit writes a batch of several agents'
// records, more than one INSERT holds, in statements of one agent each
// (its namespace bound once, each row's seq the first's plus its place):
// every agent's records get seqs without gaps from 1, in their order,
// across statements and batches, with or without arguments; PruneAudit's
// count, which counts on that, keeps the newest.
func TestAuditSeqContiguous(t *testing.T) {
	ctx := context.Background()
	c, err := store.NewCipher(make([]byte, store.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(ctx, filepath.Join(t.TempDir(), "audit.db"), &Options{Cipher: c})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	at := time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)
	count := map[string]int{}
	withArgs := map[string][]bool{}
	for batch, size := range []int{1, 341, 700} { // 341: 256+64+16+4+1, every statement
		recs := make([]store.AuditRecord, size)
		for i := range recs {
			ns := []string{"t/a", "t/b", "t/a", "t/c"}[i%4]
			count[ns]++
			recs[i] = store.AuditRecord{Namespace: ns, Time: at, ServerID: "up", Tool: "echo", Decision: store.AuditAllowed,
				Reason: fmt.Sprintf("%s %d", ns, count[ns])}
			keep := (i+batch)%5 == 0
			if keep {
				recs[i].Arguments = []byte(fmt.Sprintf(`{"n":%d}`, count[ns]))
			}
			withArgs[ns] = append(withArgs[ns], keep)
		}
		if err := s.AppendAudit(ctx, recs); err != nil {
			t.Fatal(err)
		}
	}
	for ns, n := range count {
		got, err := s.QueryAudit(ctx, ns, store.AuditQuery{Limit: store.MaxAuditLimit})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != n {
			t.Fatalf("%s: %d records, want %d", ns, len(got), n)
		}
		for i, r := range got {
			if r.Seq != int64(i+1) || r.Reason != fmt.Sprintf("%s %d", ns, i+1) {
				t.Fatalf("%s: record %d is seq %d, %q", ns, i, r.Seq, r.Reason)
			}
			if want := fmt.Sprintf(`{"n":%d}`, i+1); withArgs[ns][i] && string(r.Arguments) != want || !withArgs[ns][i] && r.Arguments != nil {
				t.Fatalf("%s: record %d's arguments %s", ns, i, r.Arguments)
			}
		}
	}
	if _, err := s.PruneAudit(ctx, "t/a", 10, time.Time{}); err != nil {
		t.Fatal(err)
	}
	got, err := s.QueryAudit(ctx, "t/a", store.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 10 || got[0].Seq != int64(count["t/a"]-9) {
		t.Fatalf("after pruning to 10: %d records from seq %d, want 10 from %d", len(got), got[0].Seq, count["t/a"]-9)
	}
}
