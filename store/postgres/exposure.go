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

var _ store.ExposureStore = (*Store)(nil)

// GetExposure implements store.ExposureStore.
func (s *Store) GetExposure(ctx context.Context, ns string) (store.Exposure, error) {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	var e store.Exposure
	err := codec.CheckNamespace(ns)
	if err == nil {
		var rules []byte
		err = s.pool.QueryRow(ctx, `SELECT rules FROM agentmcp_exposure WHERE namespace = $1`, ns).Scan(&rules)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return e, nil
		case err == nil:
			err = json.Unmarshal(rules, &e)
		}
	}
	if err != nil {
		return store.Exposure{}, fmt.Errorf("postgres: get exposure of %q: %w", ns, s.g.Err(ctx, err))
	}
	return e, nil
}

// PutExposure implements store.ExposureStore, in one statement (in a
// transaction after the fence check when fenced).
func (s *Store) PutExposure(ctx context.Context, ns string, e store.Exposure) error {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	err := codec.CheckExposure(ns, e)
	if err == nil {
		err = s.fenced(ctx, ns, func(db execer) error {
			if e.IsZero() {
				_, err := db.Exec(ctx, `DELETE FROM agentmcp_exposure WHERE namespace = $1`, ns)
				return err
			}
			rules, err := json.Marshal(e)
			if err != nil {
				return err
			}
			_, err = db.Exec(ctx, `
				INSERT INTO agentmcp_exposure (namespace, rules, updated_at) VALUES ($1, $2, $3)
				ON CONFLICT (namespace) DO UPDATE SET rules = excluded.rules, updated_at = excluded.updated_at`,
				ns, string(rules), s.now())
			return err
		})
	}
	if err != nil {
		return s.g.Failed(fmt.Errorf("postgres: put exposure of %q: %w", ns, s.g.Err(ctx, err)))
	}
	s.g.Wrote()
	return nil
}
