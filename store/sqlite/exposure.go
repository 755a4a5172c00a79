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

var _ store.ExposureStore = (*Store)(nil)

// GetExposure implements store.ExposureStore.
func (s *Store) GetExposure(ctx context.Context, ns string) (store.Exposure, error) {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	var e store.Exposure
	err := codec.CheckNamespace(ns)
	if err == nil {
		var rules string
		err = s.r.QueryRowContext(ctx, `SELECT rules FROM exposure WHERE namespace = ?`, ns).Scan(&rules)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return e, nil
		case err == nil:
			err = json.Unmarshal([]byte(rules), &e)
		}
	}
	if err != nil {
		return store.Exposure{}, fmt.Errorf("sqlite: get exposure of %q: %w", ns, s.g.Err(ctx, err))
	}
	return e, nil
}

// PutExposure implements store.ExposureStore.
func (s *Store) PutExposure(ctx context.Context, ns string, e store.Exposure) error {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	err := codec.CheckExposure(ns, e)
	if err == nil {
		if e.IsZero() {
			_, err = s.w.ExecContext(ctx, `DELETE FROM exposure WHERE namespace = ?`, ns)
		} else {
			var rules []byte
			if rules, err = json.Marshal(e); err == nil {
				_, err = s.w.ExecContext(ctx, `
				INSERT INTO exposure (namespace, rules, updated_at) VALUES (?, ?, ?)
				ON CONFLICT (namespace) DO UPDATE SET rules = excluded.rules, updated_at = excluded.updated_at`,
					ns, string(rules), s.now().UnixMicro())
			}
		}
	}
	if err != nil {
		return s.g.Failed(fmt.Errorf("sqlite: put exposure of %q: %w", ns, s.g.Err(ctx, err)))
	}
	s.g.Wrote()
	return nil
}
