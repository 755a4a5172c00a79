package sqlite

import (
	"context"
	"fmt"
)

// The queries of ListNamespaces and ListKeepAwake.
const (
	listNamespaces = `SELECT namespace FROM servers GROUP BY namespace ORDER BY MIN(seq)`
	listKeepAwake  = `
		SELECT k.namespace FROM (SELECT DISTINCT namespace FROM servers WHERE keep_awake) AS k
		ORDER BY (SELECT MIN(seq) FROM servers WHERE namespace = k.namespace)`
)

// ListNamespaces returns the namespaces ("class/instance") that have at
// least one server, in the order their first server was written. A program
// hosting many agents uses it to restore them all on start.
func (s *Store) ListNamespaces(ctx context.Context) ([]string, error) {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	out, err := s.namespaces(ctx, listNamespaces)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list namespaces: %w", s.g.Err(ctx, err))
	}
	return out, nil
}

// ListKeepAwake implements store.KeepAwakeLister. It reads the partial
// index of the keep-awake rows (servers_keep_awake), then each found
// namespace's first row, so its cost grows with the keep-awake agents, not
// with all of them.
func (s *Store) ListKeepAwake(ctx context.Context) ([]string, error) {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	out, err := s.namespaces(ctx, listKeepAwake)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list keep-awake namespaces: %w", s.g.Err(ctx, err))
	}
	return out, nil
}

// namespaces runs query, which selects one namespace per row.
func (s *Store) namespaces(ctx context.Context, query string) ([]string, error) {
	rows, err := s.r.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var ns string
		if err := rows.Scan(&ns); err != nil {
			return nil, err
		}
		out = append(out, ns)
	}
	return out, rows.Err()
}
