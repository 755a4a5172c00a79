package postgres

import (
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/store"
)

// TestAuditFollowLateCommit: an append that numbered its record first but
// commits last is not skipped by a follower. Replica A's append takes its
// seq and holds its transaction open; replica B appends to the same log
// meanwhile; the follower reads; then A commits. The follower, going on
// from its cursor, must get A's record and B's, in seq order, each once.
func TestAuditFollowLateCommit(t *testing.T) {
	ctx := t.Context()
	dsn := pg.Database(t)
	open := func() *Store {
		s, err := Open(ctx, dsn, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	a, b, reader := open(), open(), open()
	const ns = "agent/follow"
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	rec := func(tool string) store.AuditRecord {
		return store.AuditRecord{Namespace: ns, Time: at, ServerID: "srv", Tool: tool, Decision: store.AuditDenied}
	}
	// The follower has read the log so far.
	if err := a.AppendAudit(ctx, []store.AuditRecord{rec("before")}); err != nil {
		t.Fatal(err)
	}
	var seen []store.AuditRecord
	follow := func() {
		t.Helper()
		q := store.AuditQuery{}
		if len(seen) > 0 {
			q.Cursor = seen[len(seen)-1].Seq
		}
		got, err := reader.QueryAudit(ctx, ns, q)
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, got...)
	}
	follow()

	// A's append, in a transaction of its own held open once its rows are
	// numbered: its statements are those AppendAudit sends.
	txA, err := a.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer txA.Rollback(ctx)
	batch, err := a.auditBatch([]store.AuditRecord{rec("late")})
	if err != nil {
		t.Fatal(err)
	}
	if err := txA.SendBatch(ctx, batch).Close(); err != nil {
		t.Fatal(err)
	}

	// B appends: either it commits (then its seq is above A's) or it
	// waits for A; the follower reads once it has done one or the other.
	bDone := make(chan error, 1)
	go func() { bDone <- b.AppendAudit(ctx, []store.AuditRecord{rec("early")}) }()
	deadline := time.Now().Add(30 * time.Second)
	for waiting := false; !waiting; {
		select {
		case err := <-bDone:
			if err != nil {
				t.Fatal(err)
			}
			bDone <- nil
			waiting = true
			continue
		default:
		}
		if err := reader.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks l JOIN pg_database d ON d.oid = l.database
			WHERE d.datname = current_database() AND l.locktype = 'advisory' AND NOT l.granted)`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatal("B's append neither committed nor waited")
		}
	}
	follow()

	if err := txA.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-bDone; err != nil {
		t.Fatal(err)
	}
	follow()

	var tools []string
	for i, r := range seen {
		tools = append(tools, r.Tool)
		if i > 0 && r.Seq <= seen[i-1].Seq {
			t.Errorf("seq %d after %d", r.Seq, seen[i-1].Seq)
		}
	}
	all, err := reader.QueryAudit(ctx, ns, store.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 3 || len(all) != 3 {
		t.Fatalf("the follower saw %q; the log holds %d records", tools, len(all))
	}
	for i := range all {
		if all[i].Seq != seen[i].Seq {
			t.Errorf("record %d: the follower saw seq %d, the log has %d", i, seen[i].Seq, all[i].Seq)
		}
	}
}
