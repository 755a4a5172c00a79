package postgres

import (
	"io/fs"
	"os"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentmcp/agentmcp/store"
	"github.com/agentmcp/agentmcp/store/storetest"
)

// TestMigrateKeepAwake opens a database created by the first schema only,
// with rows in it: the rows are kept, none is keep-awake, and the flag can
// be set.
func TestMigrateKeepAwake(t *testing.T) {
	ctx := t.Context()
	dsn := pg.Database(t)
	init, err := fs.ReadFile(migrations(), "0001_init.sql")
	if err != nil {
		t.Fatal(err)
	}
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if err := applyMigrations(ctx, pool, fstest.MapFS{"0001_init.sql": {Data: init}}, time.Now()); err != nil {
		t.Fatal(err)
	}
	created := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	for _, id := range []string{"a", "b"} {
		if _, err := pool.Exec(ctx, `
			INSERT INTO agentmcp_servers (namespace, id, name, url, callback_url, client_id, auth_url, options, created_at, updated_at)
			VALUES ('chat/old', $1, 'old ' || $1, 'https://mcp.example.com/', '', '', '', convert_to('plain:{"sessionId":"s"}', 'UTF8'), $2, $2)`,
			id, created); err != nil {
			t.Fatal(err)
		}
	}

	s, err := Open(ctx, dsn, nil)
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
			CreatedAt: created, UpdatedAt: created},
		{Namespace: "chat/old", ID: "b", Name: "old b", URL: "https://mcp.example.com/", Options: store.ServerOptions{SessionID: "s"},
			CreatedAt: created, UpdatedAt: created},
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

// TestLarge seeds 500,000 rows and logs how long the listings take (only
// with AGENTMCP_LONG=1).
func TestLarge(t *testing.T) {
	if os.Getenv("AGENTMCP_LONG") == "" {
		t.Skip("500,000 rows: set AGENTMCP_LONG=1 (make test-long)")
	}
	dsn := pg.Database(t)
	storetest.Large(t, storetest.Backend{
		Open: func(t *testing.T, opts storetest.Options) store.Store {
			s, err := Open(t.Context(), dsn, &Options{Now: opts.Now, Cipher: opts.Cipher})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
	}, "postgres")
}
