package sqlite

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentmcp/agentmcp/store"
	"github.com/agentmcp/agentmcp/store/internal/codec"
)

// TestMigrateAuditBatches opens a database whose audit log is of the
// schema before 0010 (a row a record), its rows written as that code
// wrote them, some of their arguments sealed, seqs pruned at the start:
// every record reads back as it was, in its order, with its seq and its
// arguments opened; appends go on after the last seq given (audit_seq);
// cursors, pruning by count and by age work across the converted records
// and the new batches.
func TestMigrateAuditBatches(t *testing.T) {
	ctx := t.Context()
	c, err := store.NewCipher(make([]byte, store.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "v9.db")
	old := fstest.MapFS{}
	if err := fs.WalkDir(migrations(), ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || name >= "0010" {
			return err
		}
		data, err := fs.ReadFile(migrations(), name)
		old[name] = &fstest.MapFile{Data: data}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if _, ok := old["0009_audit.sql"]; !ok || len(old) != 9 {
		t.Fatalf("the migrations before 0010: %d", len(old))
	}
	db, err := sql.Open("sqlite", dsn(path, false, false, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	if err := applyMigrations(ctx, db, old, 0); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)
	var want []store.AuditRecord
	last := map[string]int64{"old/a": 40, "old/\u00e9": 7}
	for _, ns := range []string{"old/a", "old/\u00e9"} {
		for seq := int64(3); seq <= last[ns]; seq++ { // 1 and 2 pruned
			r := store.AuditRecord{Namespace: ns, Seq: seq, Time: at.Add(time.Duration(seq) * time.Second),
				ServerID: "srv", ServerName: "the server", Tool: []string{"echo", "add"}[seq%2], Caller: "api",
				Decision: store.AuditAllowed, Outcome: store.AuditOK, Duration: time.Duration(seq) * time.Millisecond,
				ArgumentsHash: fmt.Sprintf("%064x", seq)}
			if seq%3 == 0 {
				r.Decision, r.Outcome, r.Reason = store.AuditDenied, "", fmt.Sprintf("rule \"%d\" \\ <&> \n h\u00e9llo \U0001F600", seq)
			}
			if seq%4 == 0 {
				r.Arguments = json.RawMessage(fmt.Sprintf(`{"n":%d,"s":"\u2028"}`, seq))
			}
			record, sealed, err := codec.EncodeAudit(c, r)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.ExecContext(ctx, `INSERT INTO audit (namespace, seq, at, server_id, tool, decision, record, arguments)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, ns, seq, r.Time.UnixMicro(), r.ServerID, r.Tool, r.Decision, string(record), sealed); err != nil {
				t.Fatal(err)
			}
			if ns == "old/a" {
				want = append(want, r)
			}
		}
		if _, err := db.ExecContext(ctx, `INSERT INTO audit_seq (namespace, last) VALUES (?, ?)`, ns, last[ns]+2); err != nil { // the last two pruned
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := Open(ctx, path, &Options{Cipher: c})
	if err != nil {
		t.Fatalf("Open of a database before 0010: %v", err)
	}
	defer s.Close()
	query := func(ns string, q store.AuditQuery) []store.AuditRecord {
		t.Helper()
		got, err := s.QueryAudit(ctx, ns, q)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if diff := cmp.Diff(want, query("old/a", store.AuditQuery{Limit: 1000})); diff != "" {
		t.Fatalf("the converted records (-want +got):\n%s", diff)
	}
	if got := query("old/\u00e9", store.AuditQuery{NewestFirst: true, Limit: 2}); len(got) != 2 || got[0].Seq != 7 || got[1].Seq != 6 {
		t.Fatalf("the other agent's newest two: %+v", got)
	}
	var n int
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE name = 'audit'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("the former table: %d, %v", n, err)
	}

	// New batches follow the last seq given.
	var recs []store.AuditRecord
	for i := range 20 {
		r := want[0]
		r.Seq, r.Time, r.Arguments, r.Reason = 0, at.Add(time.Duration(100+i)*time.Second), nil, fmt.Sprintf("new %d", i)
		recs = append(recs, r)
	}
	if err := s.AppendAudit(ctx, recs); err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		recs[i].Seq = 43 + int64(i)
	}
	want = append(want, recs...)
	if diff := cmp.Diff(want, query("old/a", store.AuditQuery{Limit: 1000})); diff != "" {
		t.Fatalf("after an append (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want[30:40], query("old/a", store.AuditQuery{Cursor: want[29].Seq, Limit: 10})); diff != "" {
		t.Fatalf("a page across the converted and the new (-want +got):\n%s", diff)
	}
	// Prune: by age, among the converted; by count, inside the new
	// batch.
	if d, err := s.PruneAudit(ctx, "old/a", 0, want[10].Time); err != nil || d != 10 {
		t.Fatalf("PruneAudit by age: %d, %v", d, err)
	}
	if d, err := s.PruneAudit(ctx, "old/a", 15, time.Time{}); err != nil || d != int64(len(want)-10-15) {
		t.Fatalf("PruneAudit by count: %d, %v", d, err)
	}
	if diff := cmp.Diff(want[len(want)-15:], query("old/a", store.AuditQuery{Limit: 1000})); diff != "" {
		t.Fatalf("after pruning (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(want[len(want)-15].Reason, "new ") {
		t.Fatal("the test prunes inside the new batch no longer")
	}
}
