package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentmcp/agentmcp/store"
	"github.com/agentmcp/agentmcp/store/internal/codec"
)

var _ store.AuditStore = (*Store)(nil)

// AppendAudit implements store.AuditStore, in one write transaction.
func (s *Store) AppendAudit(ctx context.Context, records []store.AuditRecord) error {
	if len(records) == 0 {
		return nil
	}
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	err := s.appendAudit(ctx, records)
	if err != nil {
		return s.g.Failed(fmt.Errorf("sqlite: append %d audit records: %w", len(records), s.g.Err(ctx, err)))
	}
	s.g.Wrote()
	return nil
}

func (s *Store) appendAudit(ctx context.Context, records []store.AuditRecord) error {
	// The rows of each agent in turn, in the order given (a batch is
	// usually one agent's).
	order := make([]int, len(records))
	mixed := false
	for i := range records {
		order[i] = i
		mixed = mixed || records[i].Namespace != records[0].Namespace
	}
	if mixed {
		slices.SortStableFunc(order, func(i, j int) int { return strings.Compare(records[i].Namespace, records[j].Namespace) })
	}
	stmts, err := s.audit.prepared(ctx, s.w) // outside the transaction: it holds the one write connection
	if err != nil {
		return err
	}
	// Each agent's records are numbered on from its last seq
	// (audit_seq), in this write transaction (appends from other
	// processes wait for it), and written as one row: a batch
	// (codec.AppendAuditBatch).
	return s.tx(ctx, func(tx *sql.Tx) error {
		var record []byte // one record's column, reused
		for rest := order; len(rest) > 0; {
			ns := records[rest[0]].Namespace
			n := 1
			for n < len(rest) && records[rest[n]].Namespace == ns {
				n++
			}
			group := rest[:n]
			rest = rest[n:]
			var last int64
			if err := tx.StmtContext(ctx, stmts.seq).QueryRowContext(ctx, ns, int64(len(group))).Scan(&last); err != nil {
				return err
			}
			first := last - int64(len(group)) + 1
			minAt, maxAt := records[group[0]].Time.UnixMicro(), records[group[0]].Time.UnixMicro()
			for _, i := range group {
				at := records[i].Time.UnixMicro()
				minAt, maxAt = min(minAt, at), max(maxAt, at)
			}
			batch := codec.AuditBatchHeader(make([]byte, 0, 160*len(group)), first, minAt) // a call's record is about 150 bytes
			for k, i := range group {
				r := &records[i]
				var sealed []byte
				var err error
				if record, sealed, err = codec.AppendAuditRecord(record[:0], s.cipher, r); err != nil {
					return err
				}
				batch = codec.AppendAuditEntry(batch, first, minAt, first+int64(k), r.Time.UnixMicro(),
					r.ServerID, r.Tool, r.Decision, sealed, record)
			}
			if _, err := tx.StmtContext(ctx, stmts.insert).ExecContext(ctx, ns, first, last, int64(len(group)), minAt, maxAt, batch); err != nil {
				return err
			}
		}
		return nil
	})
}

// auditStmts are AppendAudit's prepared statements.
type auditStmts struct {
	mu sync.Mutex
	p  *auditPrepared // nil until prepared; never changed after
}

// auditPrepared are the statements of auditStmts.
type auditPrepared struct {
	seq    *sql.Stmt // gives an agent's next seqs
	insert *sql.Stmt // writes a batch's row
}

// prepared returns AppendAudit's statements, prepared on db the first
// time.
func (a *auditStmts) prepared(ctx context.Context, db *sql.DB) (*auditPrepared, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.p != nil {
		return a.p, nil
	}
	p := &auditPrepared{}
	var err error
	if p.seq, err = db.PrepareContext(ctx, `
		INSERT INTO audit_seq (namespace, last) VALUES (?, ?)
		ON CONFLICT (namespace) DO UPDATE SET last = last + excluded.last
		RETURNING last`); err != nil {
		return nil, err
	}
	if p.insert, err = db.PrepareContext(ctx, auditInsert); err != nil {
		p.seq.Close()
		return nil, err
	}
	a.p = p
	return p, nil
}

// auditInsert writes one batch's row.
const auditInsert = `INSERT INTO audit_batch (namespace, first, last, n, min_at, max_at, records) VALUES (?, ?, ?, ?, ?, ?, ?)`

// QueryAudit implements store.AuditStore.
func (s *Store) QueryAudit(ctx context.Context, ns string, q store.AuditQuery) ([]store.AuditRecord, error) {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	list, err := s.queryAudit(ctx, ns, q)
	if err != nil {
		return nil, fmt.Errorf("sqlite: query the audit log of %q: %w", ns, s.g.Err(ctx, err))
	}
	return list, nil
}

func (s *Store) queryAudit(ctx context.Context, ns string, q store.AuditQuery) ([]store.AuditRecord, error) {
	if err := codec.CheckNamespace(ns); err != nil {
		return nil, err
	}
	// The rows that may hold selected records, in seq order, by their
	// seqs and times; their records are decoded and filtered in turn
	// until the limit.
	conds, args := []string{"namespace = ?"}, []any{ns}
	var since, until int64
	if !q.Since.IsZero() {
		since = q.Since.UnixMicro()
		conds, args = append(conds, "max_at >= ?"), append(args, since)
	}
	if !q.Until.IsZero() {
		until = q.Until.UnixMicro()
		conds, args = append(conds, "min_at < ?"), append(args, until)
	}
	order := "first"
	if q.NewestFirst {
		order = "first DESC"
		if q.Cursor > 0 {
			conds, args = append(conds, "first < ?"), append(args, q.Cursor)
		}
	} else if q.Cursor > 0 {
		// The row holding the cursor's seq, if any, and those after it.
		conds = append(conds, "last > ?", "first >= (SELECT IFNULL(MAX(first), 0) FROM audit_batch WHERE namespace = ? AND first <= ?)")
		args = append(args, q.Cursor, ns, q.Cursor)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT records FROM audit_batch WHERE `+strings.Join(conds, " AND ")+` ORDER BY `+order, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	limit := codec.AuditLimit(q)
	list := []store.AuditRecord{}
	selected := func(e *codec.AuditEntry) bool {
		switch {
		case q.Cursor > 0 && q.NewestFirst && e.Seq >= q.Cursor,
			q.Cursor > 0 && !q.NewestFirst && e.Seq <= q.Cursor,
			!q.Since.IsZero() && e.At < since,
			!q.Until.IsZero() && e.At >= until,
			q.ServerID != "" && string(e.ServerID) != q.ServerID,
			q.Tool != "" && string(e.Tool) != q.Tool,
			q.Decision != "" && string(e.Decision) != q.Decision:
			return false
		}
		return true
	}
	var offs []int // a batch's entries' offsets, to read them newest first
	take := func(a *codec.AuditBatch, off int) (int, error) {
		e, next, err := a.Entry(off)
		if err != nil || !selected(&e) {
			return next, err
		}
		r := store.AuditRecord{Namespace: ns, Seq: e.Seq, Time: time.UnixMicro(e.At).UTC(),
			ServerID: string(e.ServerID), Tool: string(e.Tool), Decision: string(e.Decision)}
		if err := codec.DecodeAudit(s.cipher, e.Record, e.Arguments, &r); err != nil {
			return next, err
		}
		list = append(list, r)
		return next, nil
	}
	for len(list) < limit && rows.Next() {
		var batch sql.RawBytes // the entries' slices are parts of it until the next row; records are copied out
		if err := rows.Scan(&batch); err != nil {
			return nil, err
		}
		a, err := codec.OpenAuditBatch(batch)
		if err != nil {
			return nil, err
		}
		if !q.NewestFirst {
			for off := a.Start(); off < a.End() && len(list) < limit; {
				if off, err = take(&a, off); err != nil {
					return nil, err
				}
			}
			continue
		}
		offs = offs[:0]
		for off := a.Start(); off < a.End(); {
			offs = append(offs, off)
			if _, off, err = a.Entry(off); err != nil {
				return nil, err
			}
		}
		for i := len(offs) - 1; i >= 0 && len(list) < limit; i-- {
			if _, err := take(&a, offs[i]); err != nil {
				return nil, err
			}
		}
	}
	return list, rows.Err()
}

// PruneAudit implements store.AuditStore, in one write transaction: the
// rows whose records are all pruned are deleted, and a row with some
// pruned and some not is written again without them.
func (s *Store) PruneAudit(ctx context.Context, ns string, keep int, before time.Time) (int64, error) {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	var n int64
	err := codec.CheckNamespace(ns)
	if err == nil {
		err = s.tx(ctx, func(tx *sql.Tx) error {
			if !before.IsZero() {
				b := before.UnixMicro()
				d, err := pruneAuditRows(ctx, tx, `max_at < ?`, `min_at < ?`, ns, b, func(e *codec.AuditEntry) bool { return e.At < b })
				if err != nil {
					return err
				}
				n += d
			}
			if keep > 0 {
				// The newest keep are those above the last seq minus
				// keep (seq has no gaps but those pruning by age left).
				var last sql.NullInt64
				err := tx.QueryRowContext(ctx, `SELECT last FROM audit_batch WHERE namespace = ? ORDER BY first DESC LIMIT 1`, ns).Scan(&last)
				if err != nil && err != sql.ErrNoRows {
					return err
				}
				if last.Valid {
					bound := last.Int64 - int64(keep)
					d, err := pruneAuditRows(ctx, tx, `last <= ?`, `first <= ?`, ns, bound, func(e *codec.AuditEntry) bool { return e.Seq <= bound })
					if err != nil {
						return err
					}
					n += d
				}
			}
			return nil
		})
	}
	if err != nil {
		return 0, s.g.Failed(fmt.Errorf("sqlite: prune the audit log of %q: %w", ns, s.g.Err(ctx, err)))
	}
	s.g.Wrote()
	return n, nil
}

// pruneAuditRows deletes the records of ns that pruned selects: the rows
// that allOut(v) selects (all their records pruned), then, of the rows
// that someOut(v) selects among the others, those records (the row is
// written again without them). It returns how many records it deleted.
func pruneAuditRows(ctx context.Context, tx *sql.Tx, allOut, someOut, ns string, v int64, pruned func(*codec.AuditEntry) bool) (int64, error) {
	var n int64
	rows, err := tx.QueryContext(ctx, `DELETE FROM audit_batch WHERE namespace = ? AND `+allOut+` RETURNING n`, ns, v)
	if err != nil {
		return 0, err
	}
	for rows.Next() {
		var d int64
		if err := rows.Scan(&d); err != nil {
			rows.Close()
			return 0, err
		}
		n += d
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	type boundary struct {
		first int64
		batch []byte
	}
	var rewrite []boundary
	rows, err = tx.QueryContext(ctx, `SELECT first, records FROM audit_batch WHERE namespace = ? AND `+someOut, ns, v)
	if err != nil {
		return 0, err
	}
	for rows.Next() {
		var b boundary
		if err := rows.Scan(&b.first, &b.batch); err != nil {
			rows.Close()
			return 0, err
		}
		rewrite = append(rewrite, b)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	for _, b := range rewrite {
		entries, err := codec.DecodeAuditBatch(nil, b.batch)
		if err != nil {
			return 0, err
		}
		kept := slices.DeleteFunc(slices.Clone(entries), func(e codec.AuditEntry) bool { return pruned(&e) })
		if len(kept) == len(entries) {
			continue
		}
		n += int64(len(entries) - len(kept))
		if _, err := tx.ExecContext(ctx, `DELETE FROM audit_batch WHERE namespace = ? AND first = ?`, ns, b.first); err != nil {
			return 0, err
		}
		if len(kept) == 0 {
			continue
		}
		minAt, maxAt := kept[0].At, kept[0].At
		for _, e := range kept {
			minAt, maxAt = min(minAt, e.At), max(maxAt, e.At)
		}
		if _, err := tx.ExecContext(ctx, auditInsert, ns, kept[0].Seq, kept[len(kept)-1].Seq, int64(len(kept)), minAt, maxAt,
			codec.AppendAuditBatch(nil, kept)); err != nil {
			return 0, err
		}
	}
	return n, nil
}
