package sqlite

import (
	"context"
	"fmt"

	"github.com/agentmcp/agentmcp/store"
	"github.com/agentmcp/agentmcp/store/internal/codec"
)

var _ store.PinStore = (*Store)(nil)

// PutPin implements store.PinStore.
func (s *Store) PutPin(ctx context.Context, p store.Pin) error {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	err := codec.CheckPin(p.Namespace, p.ServerID, p.Tool)
	if err == nil {
		var record []byte
		if record, err = codec.EncodePin(p); err == nil {
			_, err = s.w.ExecContext(ctx, `
				INSERT INTO pins (namespace, server_id, tool, record, updated_at) VALUES (?, ?, ?, ?, ?)
				ON CONFLICT (namespace, server_id, tool) DO UPDATE SET record = excluded.record, updated_at = excluded.updated_at`,
				p.Namespace, p.ServerID, p.Tool, string(record), s.now().UnixMicro())
		}
	}
	if err != nil {
		return s.g.Failed(fmt.Errorf("sqlite: put pin %q of server %q of %q: %w", p.Tool, p.ServerID, p.Namespace, s.g.Err(ctx, err)))
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
		return nil, fmt.Errorf("sqlite: list pins of %q: %w", ns, s.g.Err(ctx, err))
	}
	return list, nil
}

func (s *Store) listPins(ctx context.Context, ns string) ([]store.Pin, error) {
	if err := codec.CheckNamespace(ns); err != nil {
		return nil, err
	}
	rows, err := s.r.QueryContext(ctx, `SELECT server_id, tool, record FROM pins WHERE namespace = ? ORDER BY server_id, tool`, ns)
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

// DeletePins implements store.PinStore.
func (s *Store) DeletePins(ctx context.Context, ns, serverID string) error {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	err := codec.CheckScope(ns, serverID)
	if err == nil {
		_, err = s.w.ExecContext(ctx, `DELETE FROM pins WHERE namespace = ? AND server_id = ?`, ns, serverID)
	}
	if err != nil {
		return s.g.Failed(fmt.Errorf("sqlite: delete pins of server %q of %q: %w", serverID, ns, s.g.Err(ctx, err)))
	}
	s.g.Wrote()
	return nil
}
