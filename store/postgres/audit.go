package postgres

import (
	"context"
	"fmt"
	"slices"
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

// Why a follower of the log misses no record.
//
// A follower reads the records after the last seq it saw (AuditQuery's
// Cursor). seq is taken from a sequence as rows are inserted, not as
// they commit: were appends of one agent's log free to overlap, one could
// take seq 7, another take 8 and commit, a follower read 8 and move its
// cursor past 7, and only then the first commit: 7 would never be shown
// to it. So each append takes, before it numbers a row of an agent, a
// transaction-scoped advisory lock of that agent's log (auditLockID),
// held until it has committed: the appends of one agent's log are
// numbered and committed one after the other, in seq's order, and a
// reader that sees a seq sees every lower one of that log.
//
// The lock is per agent, and an agent's records are written by the one
// replica that owns it (a batch at a time, by one goroutine), so it is
// rarely waited for: appends of different agents, and of different
// replicas, run side by side, and readers pay nothing. It is taken in the
// batch's first statements, in one round trip with the inserts. (Reading
// only below the oldest transaction in flight, txid_snapshot_xmin, would
// cost writers nothing but would hold every agent's log back behind any
// write transaction of the whole PostgreSQL cluster; re-reading an
// overlap window would miss the records of a transaction longer than the
// window.)
func (s *Store) appendAudit(ctx context.Context, records []store.AuditRecord) error {
	b, err := s.auditBatch(records)
	if err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		return tx.SendBatch(ctx, b).Close()
	})
}

// auditBatch returns the statements of an append of records, to be sent
// in one transaction: the locks of their logs (in the order of their ids,
// so that two appends never wait for each other's), then the INSERTs.
func (s *Store) auditBatch(records []store.AuditRecord) (*pgx.Batch, error) {
	b := &pgx.Batch{}
	var locks []int64
	for _, r := range records {
		locks = append(locks, auditLockID(r.Namespace))
	}
	slices.Sort(locks)
	for _, id := range slices.Compact(locks) {
		b.Queue(`SELECT pg_advisory_xact_lock($1)`, id)
	}
	for _, r := range records {
		record, sealed, err := codec.EncodeAudit(s.cipher, r)
		if err != nil {
			return nil, err
		}
		b.Queue(`INSERT INTO agentmcp_audit (namespace, at, server_id, tool, decision, record, arguments) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			r.Namespace, r.Time.UTC().Truncate(time.Microsecond), r.ServerID, r.Tool, r.Decision, string(record), sealed)
	}
	return b, nil
}

// auditLockID is the advisory lock of the audit log of ns, held by an
// append from before it numbers the log's rows until it has committed.
func auditLockID(ns string) int64 { return codec.LockID(ns, "", "agentmcp audit append") }

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
