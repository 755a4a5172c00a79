package sqlite

import (
	"context"
	"database/sql"
	"fmt"
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
	type row struct {
		r              store.AuditRecord
		record, sealed []byte
	}
	rows := make([]row, 0, len(records))
	for _, r := range records {
		record, sealed, err := codec.EncodeAudit(s.cipher, r)
		if err != nil {
			return err
		}
		rows = append(rows, row{r, record, sealed})
	}
	stmts, err := s.audit.prepared(ctx, s.w) // outside the transaction: it holds the one write connection
	if err != nil {
		return err
	}
	// Each agent's records are numbered on from its last seq
	// (audit_seq), in this write transaction (appends from other
	// processes wait for it), then written by multi-row INSERTs
	// (auditChunks): a few statements per batch rather than one per row.
	return s.tx(ctx, func(tx *sql.Tx) error {
		next, count := map[string]int64{}, map[string]int64{}
		for _, w := range rows {
			count[w.r.Namespace]++
		}
		for ns, n := range count {
			var last int64
			if err := tx.QueryRowContext(ctx, `
				INSERT INTO audit_seq (namespace, last) VALUES (?, ?)
				ON CONFLICT (namespace) DO UPDATE SET last = last + excluded.last
				RETURNING last`, ns, n).Scan(&last); err != nil {
				return err
			}
			next[ns] = last - n + 1
		}
		args := make([]any, 0, 8*auditChunks[0])
		for rest := rows; len(rest) > 0; {
			n := auditChunks[0]
			for _, c := range auditChunks {
				if n = c; c <= len(rest) {
					break
				}
			}
			chunk := rest[:n]
			rest = rest[n:]
			args = args[:0]
			for _, w := range chunk {
				seq := next[w.r.Namespace]
				next[w.r.Namespace] = seq + 1
				args = append(args, w.r.Namespace, seq, w.r.Time.UnixMicro(), w.r.ServerID, w.r.Tool, w.r.Decision, string(w.record), w.sealed)
			}
			if _, err := tx.StmtContext(ctx, stmts[n]).ExecContext(ctx, args...); err != nil {
				return err
			}
		}
		return nil
	})
}

// auditChunks are the row counts of AppendAudit's INSERTs, largest
// first: a batch is written by as many of the largest as fit, then the
// smaller ones, each statement prepared once per Store.
var auditChunks = [...]int{256, 64, 16, 4, 1}

// auditStmts are the prepared INSERTs of AppendAudit, by row count.
type auditStmts struct {
	mu sync.Mutex
	m  map[int]*sql.Stmt // nil until prepared; never changed after
}

// prepared returns the INSERTs of auditChunks rows, by row count,
// prepared on db the first time.
func (a *auditStmts) prepared(ctx context.Context, db *sql.DB) (map[int]*sql.Stmt, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.m != nil {
		return a.m, nil
	}
	m := map[int]*sql.Stmt{}
	for _, n := range auditChunks {
		st, err := db.PrepareContext(ctx, auditInsert(n))
		if err != nil {
			for _, st := range m {
				st.Close()
			}
			return nil, err
		}
		m[n] = st
	}
	a.m = m
	return m, nil
}

// auditInsert returns the INSERT statement of n audit rows.
func auditInsert(n int) string {
	var b strings.Builder
	b.WriteString(`INSERT INTO audit (namespace, seq, at, server_id, tool, decision, record, arguments) VALUES `)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(?, ?, ?, ?, ?, ?, ?, ?)")
	}
	return b.String()
}

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
	where, order, args := codec.AuditWhere(ns, q, func(t time.Time) any { return t.UnixMicro() }, func(int) string { return "?" })
	rows, err := s.r.QueryContext(ctx, `SELECT seq, at, server_id, tool, decision, record, arguments FROM audit WHERE `+where+
		` ORDER BY `+order+fmt.Sprintf(` LIMIT %d`, codec.AuditLimit(q)), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	list := []store.AuditRecord{}
	for rows.Next() {
		r := store.AuditRecord{Namespace: ns}
		var at int64
		var record string
		var sealed []byte
		if err := rows.Scan(&r.Seq, &at, &r.ServerID, &r.Tool, &r.Decision, &record, &sealed); err != nil {
			return nil, err
		}
		r.Time = time.UnixMicro(at).UTC()
		if err := codec.DecodeAudit(s.cipher, []byte(record), sealed, &r); err != nil {
			return nil, err
		}
		list = append(list, r)
	}
	return list, rows.Err()
}

// PruneAudit implements store.AuditStore, in one write transaction.
func (s *Store) PruneAudit(ctx context.Context, ns string, keep int, before time.Time) (int64, error) {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	var n int64
	err := codec.CheckNamespace(ns)
	if err == nil {
		err = s.tx(ctx, func(tx *sql.Tx) error {
			if !before.IsZero() {
				res, err := tx.ExecContext(ctx, `DELETE FROM audit WHERE namespace = ? AND at < ?`, ns, before.UnixMicro())
				if err != nil {
					return err
				}
				d, _ := res.RowsAffected()
				n += d
			}
			if keep > 0 {
				// seq has no gaps but at the oldest end: the newest keep
				// are those above the last seq minus keep.
				res, err := tx.ExecContext(ctx, `DELETE FROM audit WHERE namespace = ? AND seq <= (
					SELECT MAX(seq) FROM audit WHERE namespace = ?) - ?`, ns, ns, keep)
				if err != nil {
					return err
				}
				d, _ := res.RowsAffected()
				n += d
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
