package sqlite

import (
	"database/sql"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentmcp/agentmcp/store"
	"github.com/agentmcp/agentmcp/store/storetest"
)

// TestMigrateKeepAwake opens a database created by the first schema only,
// with rows in it: the rows are kept, none is keep-awake, and the flag can
// be set.
func TestMigrateKeepAwake(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "v1.db")
	init, err := fs.ReadFile(migrations(), "0001_init.sql")
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", dsn(path, false, false, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	if err := applyMigrations(ctx, db, fstest.MapFS{"0001_init.sql": {Data: init}}, 0); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b"} {
		if _, err := db.ExecContext(ctx, `
			INSERT INTO servers (namespace, id, name, url, callback_url, client_id, auth_url, options, created_at, updated_at)
			VALUES ('chat/old', ?, 'old '||?, 'https://mcp.example.com/', '', '', '', CAST('plain:{"sessionId":"s"}' AS BLOB), 1, 2)`, id, id); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatalf("Open of a first-schema database: %v", err)
	}
	defer s.Close()
	list, err := s.ListServers(ctx, "chat/old")
	if err != nil {
		t.Fatal(err)
	}
	want := []store.Server{
		{Namespace: "chat/old", ID: "a", Name: "old a", URL: "https://mcp.example.com/", Options: store.ServerOptions{SessionID: "s"},
			CreatedAt: time.UnixMicro(1).UTC(), UpdatedAt: time.UnixMicro(2).UTC()},
		{Namespace: "chat/old", ID: "b", Name: "old b", URL: "https://mcp.example.com/", Options: store.ServerOptions{SessionID: "s"},
			CreatedAt: time.UnixMicro(1).UTC(), UpdatedAt: time.UnixMicro(2).UTC()},
	}
	if diff := cmp.Diff(want, list); diff != "" {
		t.Fatalf("rows of the first schema after migrating (-want +got):\n%s", diff)
	}
	if got, err := s.ListKeepAwake(ctx); err != nil || len(got) != 0 {
		t.Fatalf("ListKeepAwake after migrating = %q, %v; want none", got, err)
	}
	if err := s.UpdateServer(ctx, "chat/old", "b", func(srv *store.Server) error { srv.KeepAwake = true; return nil }); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ListKeepAwake(ctx); err != nil || !cmp.Equal(got, []string{"chat/old"}) {
		t.Fatalf("ListKeepAwake after setting the flag = %q, %v", got, err)
	}
}

// TestKeepAwakePlan checks that ListKeepAwake reads the partial index of
// the keep-awake rows, and ListNamespaces the (namespace, seq) index,
// rather than the table.
func TestKeepAwakePlan(t *testing.T) {
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "plan.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, tt := range []struct{ query, want string }{
		{listKeepAwake, "servers_keep_awake"},
		{listNamespaces, "servers_namespace_seq"},
	} {
		rows, err := s.r.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+tt.query)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		if p := strings.Join(plan, "; "); !strings.Contains(p, tt.want) || slices.Contains(plan, "SCAN servers") {
			t.Errorf("plan of %q:\n%s\nwant the index %s and no table scan", tt.query, p, tt.want)
		}
	}
}

// TestLarge seeds 500,000 rows and logs how long the listings take (only
// with AGENTMCP_LONG=1).
func TestLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "large.db")
	storetest.Large(t, storetest.Backend{
		Open: func(t *testing.T, opts storetest.Options) store.Store {
			s, err := Open(t.Context(), path, &Options{Now: opts.Now, Cipher: opts.Cipher})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
	}, "sqlite")
}
