package postgres

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentmcp/agentmcp/store/internal/codec"
	"github.com/agentmcp/agentmcp/store/internal/migrate"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrations returns the migrations directory of migrationFiles.
func migrations() fs.FS {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		panic(err) // the embed pattern guarantees the directory
	}
	return sub
}

// applyMigrations applies the pending migrations of fsys in one
// transaction, recording each in agentmcp_schema_migrations. An advisory
// lock serialises processes that open the database at the same time: the
// later ones find nothing to do. Either every pending migration is applied
// or none is.
func applyMigrations(ctx context.Context, pool *pgxpool.Pool, fsys fs.FS, now time.Time) error {
	all, err := migrate.List(fsys)
	if err != nil {
		return err
	}
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, codec.LockID("", "", "agentmcp schema migrations")); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `
			CREATE TABLE IF NOT EXISTS agentmcp_schema_migrations (
				version    INTEGER     PRIMARY KEY,
				name       TEXT        NOT NULL,
				applied_at TIMESTAMPTZ NOT NULL
			)`); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT version FROM agentmcp_schema_migrations`)
		if err != nil {
			return err
		}
		versions, err := pgx.CollectRows(rows, pgx.RowTo[int])
		if err != nil {
			return err
		}
		applied := map[int]bool{}
		for _, v := range versions {
			applied[v] = true
		}
		pending, err := migrate.Pending(all, applied)
		if err != nil {
			return err
		}
		for _, m := range pending {
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return fmt.Errorf("%s: %w", m.Name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO agentmcp_schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`,
				m.Version, m.Name, now); err != nil {
				return fmt.Errorf("%s: %w", m.Name, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}
