package postgres

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/agentmcp/agentmcp/store"
	"github.com/agentmcp/agentmcp/store/internal/codec"
)

var _ store.CatalogStore = (*Store)(nil)

// PutCatalog implements store.CatalogStore, fenced as the server writes
// are.
func (s *Store) PutCatalog(ctx context.Context, c store.Catalog) error {
	ctx, cancel := s.g.Bound(ctx)
	defer cancel()
	err := codec.CheckCatalog(c)
	if err == nil {
		err = s.fenced(ctx, c.Namespace, func(db execer) error {
			_, err := db.Exec(ctx, `
				INSERT INTO agentmcp_catalogs (namespace, server_id, tools, prompts, resources, resource_templates, updated_at)
				VALUES ($1, $2, $3, $4, $5, $6, $7)
				ON CONFLICT (namespace, server_id) DO UPDATE SET tools = excluded.tools, prompts = excluded.prompts,
					resources = excluded.resources, resource_templates = excluded.resource_templates, updated_at = excluded.updated_at`,
				c.Namespace, c.ServerID, codec.CatalogColumn(c.Tools), codec.CatalogColumn(c.Prompts),
				codec.CatalogColumn(c.Resources), codec.CatalogColumn(c.ResourceTemplates), s.now())
			return err
		})
	}
	if err != nil {
		return s.g.Failed(fmt.Errorf("postgres: put catalog of %q/%q: %w", c.Namespace, c.ServerID, s.g.Err(ctx, err)))
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
		return nil, fmt.Errorf("postgres: list catalogs of %q: %w", ns, s.g.Err(ctx, err))
	}
	return cats, nil
}

func (s *Store) listCatalogs(ctx context.Context, ns string) ([]store.Catalog, error) {
	if err := codec.CheckNamespace(ns); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `
		SELECT server_id, tools, prompts, resources, resource_templates, updated_at FROM agentmcp_catalogs WHERE namespace = $1`, ns)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cats := []store.Catalog{}
	for rows.Next() {
		c := store.Catalog{Namespace: ns}
		var l [4]sql.NullString
		if err := rows.Scan(&c.ServerID, &l[0], &l[1], &l[2], &l[3], &c.UpdatedAt); err != nil {
			return nil, err
		}
		c.Tools, c.Prompts = codec.CatalogList(l[0]), codec.CatalogList(l[1])
		c.Resources, c.ResourceTemplates = codec.CatalogList(l[2]), codec.CatalogList(l[3])
		c.UpdatedAt = c.UpdatedAt.UTC()
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
		err = s.fenced(ctx, ns, func(db execer) error {
			_, err := db.Exec(ctx, `DELETE FROM agentmcp_catalogs WHERE namespace = $1 AND server_id = $2`, ns, serverID)
			return err
		})
	}
	if err != nil {
		return s.g.Failed(fmt.Errorf("postgres: delete catalog of %q/%q: %w", ns, serverID, s.g.Err(ctx, err)))
	}
	s.g.Wrote()
	return nil
}
