package sqlite

import (
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/store"
	"github.com/agentmcp/agentmcp/store/internal/codec"
)

// TestAuditFollowWriteLock: an append in flight elsewhere (another
// process's, here a second connection to the file) holds the database's
// write lock from its BEGIN IMMEDIATE, where it numbers its rows, to its
// commit: the Store's own append waits for it, so a follower reading
// meanwhile sees neither, and then both in seq order. Unlike on Postgres
// (store/postgres TestAuditFollowLateCommit), a seq can never commit
// behind one a follower saw.
func TestAuditFollowWriteLock(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "agentmcp.db")
	s, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const ns = "agent/follow"
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	rec := func(tool string) store.AuditRecord {
		return store.AuditRecord{Namespace: ns, Time: at, ServerID: "srv", Tool: tool, Decision: store.AuditDenied}
	}
	if err := s.AppendAudit(ctx, []store.AuditRecord{rec("before")}); err != nil {
		t.Fatal(err)
	}
	var seen []store.AuditRecord
	follow := func() {
		t.Helper()
		got, err := s.QueryAudit(ctx, ns, store.AuditQuery{Cursor: seen[len(seen)-1].Seq})
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, got...)
	}
	seen, err = s.QueryAudit(ctx, ns, store.AuditQuery{})
	if err != nil || len(seen) != 1 {
		t.Fatalf("the log: %v %v", seen, err)
	}

	// The other writer numbers its batch as AppendAudit does, and holds
	// its transaction open.
	other, err := sql.Open("sqlite", dsn(path, false, false, 30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	tx, err := other.BeginTx(ctx, nil) // BEGIN IMMEDIATE (dsn's _txlock)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var seq int64
	if err := tx.QueryRowContext(ctx, `INSERT INTO audit_seq (namespace, last) VALUES (?, 1)
		ON CONFLICT (namespace) DO UPDATE SET last = last + excluded.last RETURNING last`, ns).Scan(&seq); err != nil {
		t.Fatal(err)
	}
	batch := codec.AppendAuditBatch(nil, []codec.AuditEntry{{Seq: seq, At: at.UnixMicro(), ServerID: []byte("srv"), Tool: []byte("late"),
		Decision: []byte(store.AuditDenied), Record: []byte("{}")}})
	if _, err := tx.ExecContext(ctx, auditInsert, ns, seq, seq, 1, at.UnixMicro(), at.UnixMicro(), batch); err != nil {
		t.Fatal(err)
	}

	done := make(chan error, 1)
	go func() { done <- s.AppendAudit(ctx, []store.AuditRecord{rec("early")}) }()
	follow()
	select {
	case err := <-done:
		t.Fatalf("an append finished while another held the write lock: %v", err)
	default:
	}
	if len(seen) != 1 {
		t.Fatalf("the follower saw %d records while both appends were in flight", len(seen)-1)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	follow()
	var tools []string
	for _, r := range seen {
		tools = append(tools, r.Tool)
	}
	if len(seen) != 3 || tools[1] != "late" || tools[2] != "early" || seen[1].Seq != seq || seen[2].Seq <= seq {
		t.Fatalf("the follower saw %q (seqs %d, %d)", tools, seen[1].Seq, seen[len(seen)-1].Seq)
	}
}
