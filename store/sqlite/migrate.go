package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"

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

// applyMigrations applies the pending migrations of fsys in one write transaction
// (BEGIN IMMEDIATE, so concurrent openers in other processes wait and then
// find nothing to do), recording each in schema_migrations. Either every
// pending migration is applied or none is.
func applyMigrations(ctx context.Context, db *sql.DB, fsys fs.FS, now int64) error {
	all, err := migrate.List(fsys)
	if err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `
		CREATE TABLE IF NOT EXISTS schema_migrations (
			version    INTEGER PRIMARY KEY,
			name       TEXT    NOT NULL,
			applied_at INTEGER NOT NULL -- unix microseconds
		) STRICT`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	applied := map[int]bool{}
	rows, err := tx.QueryContext(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return fmt.Errorf("migrate: %w", err)
		}
		applied[v] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	pending, err := migrate.Pending(all, applied)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	for _, m := range pending {
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			return fmt.Errorf("migrate: %s: %w", m.Name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
			m.Version, m.Name, now); err != nil {
			return fmt.Errorf("migrate: %s: %w", m.Name, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// checkMigrations fails unless every migration of fsys is applied: a
// read-only Store reads only a database migrated by a process that writes.
func checkMigrations(ctx context.Context, db *sql.DB, fsys fs.FS) error {
	all, err := migrate.List(fsys)
	if err != nil {
		return err
	}
	applied, err := appliedMigrations(ctx, db)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	pending, err := migrate.Pending(all, applied)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if len(pending) > 0 {
		return fmt.Errorf("migrate: %d migrations pending (%s first): a read-only open cannot apply them", len(pending), pending[0].Name)
	}
	return nil
}

// appliedMigrations returns the versions recorded in schema_migrations,
// none when there is no such table (a new database), without writing.
func appliedMigrations(ctx context.Context, db *sql.DB) (map[int]bool, error) {
	applied := map[int]bool{}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'schema_migrations'`).Scan(&n); err != nil || n == 0 {
		return applied, err
	}
	rows, err := db.QueryContext(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		applied[v] = true
	}
	return applied, rows.Err()
}
