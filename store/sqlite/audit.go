package sqlite

import (
	"context"
	"database/sql"
	"fmt"
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
		if err := codec.CheckAudit(r); err != nil {
			return err
		}
		record, sealed, err := codec.EncodeAudit(s.cipher, r)
		if err != nil {
			return err
		}
		rows = append(rows, row{r, record, sealed})
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO audit (namespace, at, server_id, tool, decision, record, arguments) VALUES (?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, w := range rows {
			if _, err := stmt.ExecContext(ctx, w.r.Namespace, w.r.Time.UnixMicro(), w.r.ServerID, w.r.Tool, w.r.Decision, string(w.record), w.sealed); err != nil {
				return err
			}
		}
		return nil
	})
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
				res, err := tx.ExecContext(ctx, `DELETE FROM audit WHERE namespace = ? AND seq <= (
					SELECT seq FROM audit WHERE namespace = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)`, ns, ns, keep)
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
