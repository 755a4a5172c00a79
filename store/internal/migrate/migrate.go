// Package migrate reads the numbered SQL migrations the store backends
// embed. Each backend applies them with its own driver.
package migrate

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// Migration is one file NNNN_name.sql.
type Migration struct {
	Version int    // NNNN, from 1
	Name    string // the file name
	SQL     string
}

// List returns the migrations in the root of fsys, by version. Every .sql
// file must be named NNNN_name.sql with a distinct version of at least 1.
func List(fsys fs.FS) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	var out []Migration
	seen := map[int]string{}
	for _, e := range entries {
		if e.IsDir() || path.Ext(e.Name()) != ".sql" {
			continue
		}
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v < 1 {
			return nil, fmt.Errorf("migrations: %s is not named NNNN_name.sql", e.Name())
		}
		if other, dup := seen[v]; dup {
			return nil, fmt.Errorf("migrations: %s and %s have the same version", other, e.Name())
		}
		seen[v] = e.Name()
		b, err := fs.ReadFile(fsys, e.Name())
		if err != nil {
			return nil, fmt.Errorf("migrations: %w", err)
		}
		out = append(out, Migration{Version: v, Name: e.Name(), SQL: string(b)})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("migrations: none found")
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}

// Pending returns the migrations of all whose version is not in applied.
// It fails when applied holds a version newer than every migration: the
// database was migrated by a newer build.
func Pending(all []Migration, applied map[int]bool) ([]Migration, error) {
	latest := all[len(all)-1].Version
	for v := range applied {
		if v > latest {
			return nil, fmt.Errorf("database schema version %d is newer than this build's %d; upgrade agentmcp", v, latest)
		}
	}
	var out []Migration
	for _, m := range all {
		if !applied[m.Version] {
			out = append(out, m)
		}
	}
	return out, nil
}
