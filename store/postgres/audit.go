package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentmcp/agentmcp/store"
	"github.com/agentmcp/agentmcp/store/internal/codec"
)

var _ store.AuditStore = (*Store)(nil)

// AppendAudit implements store.AuditStore: one transaction, the rows sent
// in one batch. Records are not fenced: each replica appends those of the
// calls it made.
func (s *Store) AppendAudit(ctx context.Context, records []store.AuditRecord) error {
	if len(records) == 0 {
		return nil
	}
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	err := s.appendAudit(ctx, records)
	if err != nil {
		return s.g.Failed(fmt.Errorf("postgres: append %d audit records: %w", len(records), s.g.Err(ctx, err)))
	}
	s.g.Wrote()
	return nil
}

func (s *Store) appendAudit(ctx context.Context, records []store.AuditRecord) error {
	var b pgx.Batch
	for _, r := range records {
		record, sealed, err := codec.EncodeAudit(s.cipher, r)
		if err != nil {
			return err
		}
		b.Queue(`INSERT INTO agentmcp_audit (namespace, at, server_id, tool, decision, record, arguments) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			r.Namespace, r.Time.UTC().Truncate(time.Microsecond), r.ServerID, r.Tool, r.Decision, string(record), sealed)
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		return tx.SendBatch(ctx, &b).Close()
	})
}

// QueryAudit implements store.AuditStore.
func (s *Store) QueryAudit(ctx context.Context, ns string, q store.AuditQuery) ([]store.AuditRecord, error) {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	list, err := s.queryAudit(ctx, ns, q)
	if err != nil {
		return nil, fmt.Errorf("postgres: query the audit log of %q: %w", ns, s.g.Err(ctx, err))
	}
	return list, nil
}

func (s *Store) queryAudit(ctx context.Context, ns string, q store.AuditQuery) ([]store.AuditRecord, error) {
	if err := codec.CheckNamespace(ns); err != nil {
		return nil, err
	}
	where, order, args := codec.AuditWhere(ns, q, func(t time.Time) any { return t.UTC() }, func(i int) string { return fmt.Sprintf("$%d", i) })
	rows, err := s.pool.Query(ctx, `SELECT seq, at, server_id, tool, decision, record, arguments FROM agentmcp_audit WHERE `+where+
		` ORDER BY `+order+fmt.Sprintf(` LIMIT %d`, codec.AuditLimit(q)), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	list := []store.AuditRecord{}
	for rows.Next() {
		r := store.AuditRecord{Namespace: ns}
		var record string
		var sealed []byte
		if err := rows.Scan(&r.Seq, &r.Time, &r.ServerID, &r.Tool, &r.Decision, &record, &sealed); err != nil {
			return nil, err
		}
		r.Time = r.Time.UTC()
		if err := codec.DecodeAudit(s.cipher, []byte(record), sealed, &r); err != nil {
			return nil, err
		}
		list = append(list, r)
	}
	return list, rows.Err()
}

// PruneAudit implements store.AuditStore, in one transaction.
func (s *Store) PruneAudit(ctx context.Context, ns string, keep int, before time.Time) (int64, error) {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	var n int64
	err := codec.CheckNamespace(ns)
	if err == nil {
		err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			if !before.IsZero() {
				tag, err := tx.Exec(ctx, `DELETE FROM agentmcp_audit WHERE namespace = $1 AND at < $2`, ns, before.UTC())
				if err != nil {
					return err
				}
				n += tag.RowsAffected()
			}
			if keep > 0 {
				tag, err := tx.Exec(ctx, `DELETE FROM agentmcp_audit WHERE namespace = $1 AND seq <= (
					SELECT seq FROM agentmcp_audit WHERE namespace = $1 ORDER BY seq DESC LIMIT 1 OFFSET $2)`, ns, keep)
				if err != nil {
					return err
				}
				n += tag.RowsAffected()
			}
			return nil
		})
	}
	if err != nil {
		return 0, s.g.Failed(fmt.Errorf("postgres: prune the audit log of %q: %w", ns, s.g.Err(ctx, err)))
	}
	s.g.Wrote()
	return n, nil
}
