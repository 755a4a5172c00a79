package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentmcp/agentmcp/store"
	"github.com/agentmcp/agentmcp/store/internal/codec"
)

var (
	_ store.PolicyStore   = (*Store)(nil)
	_ store.ApprovalStore = (*Store)(nil)
)

// GetPolicy implements store.PolicyStore.
func (s *Store) GetPolicy(ctx context.Context, ns string) (json.RawMessage, error) {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	err := codec.CheckNamespace(ns)
	if err == nil {
		var doc string
		err = s.r.QueryRowContext(ctx, `SELECT doc FROM policies WHERE namespace = ?`, ns).Scan(&doc)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return nil, nil
		case err == nil:
			return json.RawMessage(doc), nil
		}
	}
	return nil, fmt.Errorf("sqlite: get policy of %q: %w", ns, s.g.Err(ctx, err))
}

// PutPolicy implements store.PolicyStore.
func (s *Store) PutPolicy(ctx context.Context, ns string, doc json.RawMessage) error {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	err := codec.CheckNamespace(ns)
	switch {
	case err != nil:
	case len(doc) == 0:
		_, err = s.w.ExecContext(ctx, `DELETE FROM policies WHERE namespace = ?`, ns)
	case !json.Valid(doc):
		err = errors.New("the policy is not JSON")
	default:
		_, err = s.w.ExecContext(ctx, `
			INSERT INTO policies (namespace, doc, updated_at) VALUES (?, ?, ?)
			ON CONFLICT (namespace) DO UPDATE SET doc = excluded.doc, updated_at = excluded.updated_at`,
			ns, string(doc), s.now().UnixMicro())
	}
	if err != nil {
		return s.g.Failed(fmt.Errorf("sqlite: put policy of %q: %w", ns, s.g.Err(ctx, err)))
	}
	s.g.Wrote()
	return nil
}

// PutApproval implements store.ApprovalStore.
func (s *Store) PutApproval(ctx context.Context, a store.Approval) error {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	err := codec.CheckApproval(a.Namespace, a.ID)
	if err == nil {
		var record []byte
		if record, err = codec.EncodeApproval(a); err == nil {
			_, err = s.w.ExecContext(ctx, `
				INSERT INTO approvals (namespace, id, state, record, seq, updated_at)
				VALUES (?, ?, ?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM approvals), ?)
				ON CONFLICT (namespace, id) DO UPDATE SET state = excluded.state, record = excluded.record, updated_at = excluded.updated_at`,
				a.Namespace, a.ID, a.State, string(record), s.now().UnixMicro())
		}
	}
	if err != nil {
		return s.g.Failed(fmt.Errorf("sqlite: put approval %q of %q: %w", a.ID, a.Namespace, s.g.Err(ctx, err)))
	}
	s.g.Wrote()
	return nil
}

// GetApproval implements store.ApprovalStore.
func (s *Store) GetApproval(ctx context.Context, ns, id string) (store.Approval, error) {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	var a store.Approval
	err := codec.CheckApproval(ns, id)
	if err == nil {
		var state, record string
		err = s.r.QueryRowContext(ctx, `SELECT state, record FROM approvals WHERE namespace = ? AND id = ?`, ns, id).Scan(&state, &record)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			err = store.ErrNotFound
		case err == nil:
			err = codec.DecodeApproval([]byte(record), ns, id, state, &a)
		}
	}
	if err != nil {
		return store.Approval{}, fmt.Errorf("sqlite: get approval %q of %q: %w", id, ns, s.g.Err(ctx, err))
	}
	return a, nil
}

// ListApprovals implements store.ApprovalStore.
func (s *Store) ListApprovals(ctx context.Context, ns string) ([]store.Approval, error) {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	list, err := s.listApprovals(ctx, ns)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list approvals of %q: %w", ns, s.g.Err(ctx, err))
	}
	return list, nil
}

func (s *Store) listApprovals(ctx context.Context, ns string) ([]store.Approval, error) {
	if err := codec.CheckNamespace(ns); err != nil {
		return nil, err
	}
	rows, err := s.r.QueryContext(ctx, `SELECT id, state, record FROM approvals WHERE namespace = ? ORDER BY seq`, ns)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	list := []store.Approval{}
	for rows.Next() {
		var id, state, record string
		if err := rows.Scan(&id, &state, &record); err != nil {
			return nil, err
		}
		var a store.Approval
		if err := codec.DecodeApproval([]byte(record), ns, id, state, &a); err != nil {
			return nil, err
		}
		list = append(list, a)
	}
	return list, rows.Err()
}

// SwapApproval implements store.ApprovalStore.
func (s *Store) SwapApproval(ctx context.Context, a store.Approval, from string) (bool, error) {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	var n int64
	err := codec.CheckApproval(a.Namespace, a.ID)
	if err == nil {
		var record []byte
		if record, err = codec.EncodeApproval(a); err == nil {
			var res sql.Result
			res, err = s.w.ExecContext(ctx, `
				UPDATE approvals SET state = ?, record = ?, updated_at = ?
				WHERE namespace = ? AND id = ? AND state = ?`,
				a.State, string(record), s.now().UnixMicro(), a.Namespace, a.ID, from)
			if err == nil {
				n, err = res.RowsAffected()
			}
		}
	}
	if err != nil {
		return false, s.g.Failed(fmt.Errorf("sqlite: swap approval %q of %q: %w", a.ID, a.Namespace, s.g.Err(ctx, err)))
	}
	s.g.Wrote()
	return n == 1, nil
}

// DeleteApprovals implements store.ApprovalStore.
func (s *Store) DeleteApprovals(ctx context.Context, ns string, ids []string) (int, error) {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	var n int64
	err := codec.CheckNamespace(ns)
	if err == nil && len(ids) > 0 {
		err = s.tx(ctx, func(tx *sql.Tx) error {
			for _, id := range ids {
				res, err := tx.ExecContext(ctx, `
					DELETE FROM approvals WHERE namespace = ? AND id = ? AND state IN (?, ?, ?)`,
					ns, id, store.ApprovalDenied, store.ApprovalExpired, store.ApprovalDone)
				if err != nil {
					return err
				}
				k, err := res.RowsAffected()
				if err != nil {
					return err
				}
				n += k
			}
			return nil
		})
	}
	if err != nil {
		return 0, s.g.Failed(fmt.Errorf("sqlite: delete approvals of %q: %w", ns, s.g.Err(ctx, err)))
	}
	if len(ids) > 0 {
		s.g.Wrote()
	}
	return int(n), nil
}
