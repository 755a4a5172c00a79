package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

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
		err = s.pool.QueryRow(ctx, `SELECT doc FROM agentmcp_policies WHERE namespace = $1`, ns).Scan(&doc)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return nil, nil
		case err == nil:
			return json.RawMessage(doc), nil
		}
	}
	return nil, fmt.Errorf("postgres: get policy of %q: %w", ns, s.g.Err(ctx, err))
}

// PutPolicy implements store.PolicyStore, in one statement (in a
// transaction after the fence check when fenced).
func (s *Store) PutPolicy(ctx context.Context, ns string, doc json.RawMessage) error {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	err := codec.CheckNamespace(ns)
	if err == nil && len(doc) > 0 && !json.Valid(doc) {
		err = errors.New("the policy is not JSON")
	}
	if err == nil {
		err = s.fenced(ctx, ns, func(db execer) error {
			if len(doc) == 0 {
				_, err := db.Exec(ctx, `DELETE FROM agentmcp_policies WHERE namespace = $1`, ns)
				return err
			}
			_, err := db.Exec(ctx, `
				INSERT INTO agentmcp_policies (namespace, doc, updated_at) VALUES ($1, $2, $3)
				ON CONFLICT (namespace) DO UPDATE SET doc = excluded.doc, updated_at = excluded.updated_at`,
				ns, string(doc), s.now())
			return err
		})
	}
	if err != nil {
		return s.g.Failed(fmt.Errorf("postgres: put policy of %q: %w", ns, s.g.Err(ctx, err)))
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
			err = s.fenced(ctx, a.Namespace, func(db execer) error {
				_, err := db.Exec(ctx, `
					INSERT INTO agentmcp_approvals (namespace, id, state, record, updated_at)
					VALUES ($1, $2, $3, $4, $5)
					ON CONFLICT (namespace, id) DO UPDATE SET state = excluded.state, record = excluded.record, updated_at = excluded.updated_at`,
					a.Namespace, a.ID, a.State, string(record), s.now())
				return err
			})
		}
	}
	if err != nil {
		return s.g.Failed(fmt.Errorf("postgres: put approval %q of %q: %w", a.ID, a.Namespace, s.g.Err(ctx, err)))
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
		err = s.pool.QueryRow(ctx, `SELECT state, record FROM agentmcp_approvals WHERE namespace = $1 AND id = $2`, ns, id).Scan(&state, &record)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			err = store.ErrNotFound
		case err == nil:
			err = codec.DecodeApproval([]byte(record), ns, id, state, &a)
		}
	}
	if err != nil {
		return store.Approval{}, fmt.Errorf("postgres: get approval %q of %q: %w", id, ns, s.g.Err(ctx, err))
	}
	return a, nil
}

// ListApprovals implements store.ApprovalStore.
func (s *Store) ListApprovals(ctx context.Context, ns string) ([]store.Approval, error) {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	list, err := s.listApprovals(ctx, ns)
	if err != nil {
		return nil, fmt.Errorf("postgres: list approvals of %q: %w", ns, s.g.Err(ctx, err))
	}
	return list, nil
}

func (s *Store) listApprovals(ctx context.Context, ns string) ([]store.Approval, error) {
	if err := codec.CheckNamespace(ns); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT id, state, record FROM agentmcp_approvals WHERE namespace = $1 ORDER BY seq`, ns)
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

// SwapApproval implements store.ApprovalStore, in one conditional update.
func (s *Store) SwapApproval(ctx context.Context, a store.Approval, from string) (bool, error) {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	var n int64
	err := codec.CheckApproval(a.Namespace, a.ID)
	if err == nil {
		var record []byte
		if record, err = codec.EncodeApproval(a); err == nil {
			err = s.fenced(ctx, a.Namespace, func(db execer) error {
				tag, err := db.Exec(ctx, `
					UPDATE agentmcp_approvals SET state = $1, record = $2, updated_at = $3
					WHERE namespace = $4 AND id = $5 AND state = $6`,
					a.State, string(record), s.now(), a.Namespace, a.ID, from)
				n = tag.RowsAffected()
				return err
			})
		}
	}
	if err != nil {
		return false, s.g.Failed(fmt.Errorf("postgres: swap approval %q of %q: %w", a.ID, a.Namespace, s.g.Err(ctx, err)))
	}
	s.g.Wrote()
	return n == 1, nil
}

// DeleteApprovals implements store.ApprovalStore, in one fenced delete.
func (s *Store) DeleteApprovals(ctx context.Context, ns string, ids []string) (int, error) {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	var n int64
	err := codec.CheckNamespace(ns)
	if err == nil && len(ids) > 0 {
		err = s.fenced(ctx, ns, func(db execer) error {
			tag, err := db.Exec(ctx, `
				DELETE FROM agentmcp_approvals WHERE namespace = $1 AND id = ANY($2) AND state IN ($3, $4, $5)`,
				ns, ids, store.ApprovalDenied, store.ApprovalExpired, store.ApprovalDone)
			n = tag.RowsAffected()
			return err
		})
	}
	if err != nil {
		return 0, s.g.Failed(fmt.Errorf("postgres: delete approvals of %q: %w", ns, s.g.Err(ctx, err)))
	}
	if len(ids) > 0 {
		s.g.Wrote()
	}
	return int(n), nil
}
