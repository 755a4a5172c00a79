package sqlite

import (
	"context"
	"fmt"
)

// ListNamespaces returns the namespaces ("class/instance") that have at
// least one server, in the order their first server was written. A program
// hosting many agents uses it to restore them all on start.
func (s *Store) ListNamespaces(ctx context.Context) ([]string, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT namespace FROM servers GROUP BY namespace ORDER BY MIN(seq)`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list namespaces: %w", err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var ns string
		if err := rows.Scan(&ns); err != nil {
			return nil, fmt.Errorf("sqlite: list namespaces: %w", err)
		}
		out = append(out, ns)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list namespaces: %w", err)
	}
	return out, nil
}
