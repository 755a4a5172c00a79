package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// ListNamespaces returns the namespaces ("class/instance") that have at
// least one server, in the order their first server was written. A program
// hosting many agents uses it to restore them all on start.
func (s *Store) ListNamespaces(ctx context.Context) ([]string, error) {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	out, err := s.namespaces(ctx, `SELECT namespace FROM agentmcp_servers GROUP BY namespace ORDER BY MIN(seq)`)
	if err != nil {
		return nil, fmt.Errorf("postgres: list namespaces: %w", s.g.Err(ctx, err))
	}
	return out, nil
}

// ListKeepAwake implements store.KeepAwakeLister. It reads the partial
// index of the keep-awake rows (agentmcp_servers_keep_awake), then each
// found namespace's first row, so its cost grows with the keep-awake
// agents, not with all of them.
func (s *Store) ListKeepAwake(ctx context.Context) ([]string, error) {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	out, err := s.namespaces(ctx, `
		SELECT k.namespace FROM (SELECT DISTINCT namespace FROM agentmcp_servers WHERE keep_awake) AS k
		ORDER BY (SELECT MIN(seq) FROM agentmcp_servers WHERE namespace = k.namespace)`)
	if err != nil {
		return nil, fmt.Errorf("postgres: list keep-awake namespaces: %w", s.g.Err(ctx, err))
	}
	return out, nil
}

// namespaces runs query, which selects one namespace per row.
func (s *Store) namespaces(ctx context.Context, query string) ([]string, error) {
	rows, err := s.pool.Query(ctx, query)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if out == nil && err == nil {
		out = []string{}
	}
	return out, err
}
