package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/agentmcp/agentmcp/store"
	"github.com/agentmcp/agentmcp/store/internal/codec"
)

var _ store.CatalogStore = (*Store)(nil)

// PutCatalog implements store.CatalogStore.
func (s *Store) PutCatalog(ctx context.Context, c store.Catalog) error {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	record, err := codec.EncodeCatalog(c)
	if err == nil {
		_, err = s.w.ExecContext(ctx, `
			INSERT INTO catalogs (namespace, server_id, record, updated_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (namespace, server_id) DO UPDATE SET record = excluded.record, updated_at = excluded.updated_at`,
			c.Namespace, c.ServerID, string(record), s.now().UnixMicro())
	}
	if err != nil {
		return s.g.Failed(fmt.Errorf("sqlite: put catalog of %q/%q: %w", c.Namespace, c.ServerID, s.g.Err(ctx, err)))
	}
	s.g.Wrote()
	return nil
}

// ListCatalogs implements store.CatalogStore.
func (s *Store) ListCatalogs(ctx context.Context, ns string) ([]store.Catalog, error) {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	cats, err := s.listCatalogs(ctx, ns)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list catalogs of %q: %w", ns, s.g.Err(ctx, err))
	}
	return cats, nil
}

func (s *Store) listCatalogs(ctx context.Context, ns string) ([]store.Catalog, error) {
	if err := codec.CheckNamespace(ns); err != nil {
		return nil, err
	}
	rows, err := s.r.QueryContext(ctx, `SELECT server_id, record, updated_at FROM catalogs WHERE namespace = ?`, ns)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cats := []store.Catalog{}
	for rows.Next() {
		c := store.Catalog{Namespace: ns}
		var (
			record  string
			updated int64
		)
		if err := rows.Scan(&c.ServerID, &record, &updated); err != nil {
			return nil, err
		}
		if err := codec.DecodeCatalog([]byte(record), &c); err != nil {
			return nil, err
		}
		c.UpdatedAt = time.UnixMicro(updated).UTC()
		cats = append(cats, c)
	}
	return cats, rows.Err()
}

// DeleteCatalog implements store.CatalogStore.
func (s *Store) DeleteCatalog(ctx context.Context, ns, serverID string) error {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	err := codec.CheckScope(ns, serverID)
	if err == nil {
		_, err = s.w.ExecContext(ctx, `DELETE FROM catalogs WHERE namespace = ? AND server_id = ?`, ns, serverID)
	}
	if err != nil {
		return s.g.Failed(fmt.Errorf("sqlite: delete catalog of %q/%q: %w", ns, serverID, s.g.Err(ctx, err)))
	}
	s.g.Wrote()
	return nil
}
