package postgres

import (
	"context"
	"fmt"

	"github.com/agentmcp/agentmcp/store"
	"github.com/agentmcp/agentmcp/store/internal/codec"
)

var _ store.PinStore = (*Store)(nil)

// PutPin implements store.PinStore, in one statement (in a transaction
// after the fence check when fenced).
func (s *Store) PutPin(ctx context.Context, p store.Pin) error {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	err := codec.CheckPin(p.Namespace, p.ServerID, p.Tool)
	if err == nil {
		var record []byte
		if record, err = codec.EncodePin(p); err == nil {
			err = s.fenced(ctx, p.Namespace, func(db execer) error {
				_, err := db.Exec(ctx, `
					INSERT INTO agentmcp_pins (namespace, server_id, tool, record, updated_at) VALUES ($1, $2, $3, $4, $5)
					ON CONFLICT (namespace, server_id, tool) DO UPDATE SET record = excluded.record, updated_at = excluded.updated_at`,
					p.Namespace, p.ServerID, p.Tool, string(record), s.now())
				return err
			})
		}
	}
	if err != nil {
		return s.g.Failed(fmt.Errorf("postgres: put pin %q of server %q of %q: %w", p.Tool, p.ServerID, p.Namespace, s.g.Err(ctx, err)))
	}
	s.g.Wrote()
	return nil
}

// ListPins implements store.PinStore.
func (s *Store) ListPins(ctx context.Context, ns string) ([]store.Pin, error) {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	list, err := s.listPins(ctx, ns)
	if err != nil {
		return nil, fmt.Errorf("postgres: list pins of %q: %w", ns, s.g.Err(ctx, err))
	}
	return list, nil
}

func (s *Store) listPins(ctx context.Context, ns string) ([]store.Pin, error) {
	if err := codec.CheckNamespace(ns); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT server_id, tool, record FROM agentmcp_pins WHERE namespace = $1 ORDER BY server_id, tool`, ns)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	list := []store.Pin{}
	for rows.Next() {
		var serverID, tool, record string
		if err := rows.Scan(&serverID, &tool, &record); err != nil {
			return nil, err
		}
		var p store.Pin
		if err := codec.DecodePin([]byte(record), ns, serverID, tool, &p); err != nil {
			return nil, err
		}
		list = append(list, p)
	}
	return list, rows.Err()
}

// DeletePins implements store.PinStore, fenced as PutPin is.
func (s *Store) DeletePins(ctx context.Context, ns, serverID string) error {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	err := codec.CheckScope(ns, serverID)
	if err == nil {
		err = s.fenced(ctx, ns, func(db execer) error {
			_, err := db.Exec(ctx, `DELETE FROM agentmcp_pins WHERE namespace = $1 AND server_id = $2`, ns, serverID)
			return err
		})
	}
	if err != nil {
		return s.g.Failed(fmt.Errorf("postgres: delete pins of server %q of %q: %w", serverID, ns, s.g.Err(ctx, err)))
	}
	s.g.Wrote()
	return nil
}
