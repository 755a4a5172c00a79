package postgres

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentmcp/agentmcp/internal/testing/pgtest"
	"github.com/agentmcp/agentmcp/store"
	"github.com/agentmcp/agentmcp/store/internal/migrate"
	"github.com/agentmcp/agentmcp/store/storetest"
)

// pg is the test binary's PostgreSQL server, started by the first test that
// needs a database.
var pg = pgtest.New()

func TestMain(m *testing.M) {
	os.Exit(pg.Main(m))
}

// databases gives each test its own database.
type databases struct {
	mu   sync.Mutex
	dsns map[*testing.T]string
}

func (d *databases) dsn(t *testing.T) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	dsn, ok := d.dsns[t]
	if !ok {
		dsn = pg.Database(t)
		d.dsns[t] = dsn
	}
	return dsn
}

func TestStore(t *testing.T) {
	d := &databases{dsns: map[*testing.T]string{}}
	storetest.Run(t, storetest.Backend{
		Open: func(t *testing.T, opts storetest.Options) store.Store {
			s, err := Open(t.Context(), d.dsn(t), &Options{Now: opts.Now, Cipher: opts.Cipher})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
		URLColumn: func(t *testing.T, s store.Store, ns, id string) string {
			var u string
			if err := s.(*Store).pool.QueryRow(t.Context(), `SELECT url FROM agentmcp_servers WHERE namespace = $1 AND id = $2`, ns, id).Scan(&u); err != nil {
				t.Fatal(err)
			}
			return u
		},
		SetURLColumn: func(t *testing.T, s store.Store, ns, id, url string) {
			if _, err := s.(*Store).pool.Exec(t.Context(), `UPDATE agentmcp_servers SET url = $1 WHERE namespace = $2 AND id = $3`, url, ns, id); err != nil {
				t.Fatal(err)
			}
		},
		// Raw is every stored column value, as the bytes the server holds.
		Raw: func(t *testing.T) []byte {
			conn, err := pgx.Connect(t.Context(), d.dsn(t))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(context.Background())
			var raw []byte
			for _, q := range []string{
				`SELECT namespace, id, name, url, callback_url, client_id, auth_url, options FROM agentmcp_servers`,
				`SELECT namespace, server_id, key, value FROM agentmcp_kv`,
				`SELECT namespace, server_id, tool, record, arguments FROM agentmcp_audit`,
			} {
				rows, err := conn.Query(t.Context(), q, pgx.QueryResultFormats{pgx.BinaryFormatCode})
				if err != nil {
					t.Fatal(err)
				}
				for rows.Next() {
					for _, v := range rows.RawValues() {
						raw = append(raw, v...)
					}
				}
				if err := rows.Err(); err != nil {
					t.Fatal(err)
				}
			}
			return raw
		},
		LockAcrossStores: true,
		Claim: func(t *testing.T, s store.Store, ns, replica string) store.Fence {
			return claim(t, s.(*Store), ns, replica)
		},
	})
}

// TestMigrations checks that concurrent Opens of a new database all
// succeed, that migrations are recorded once, and that a database migrated
// by a newer build is refused.
func TestMigrations(t *testing.T) {
	ctx := t.Context()
	dsn := pg.Database(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			s, err := Open(ctx, dsn, nil)
			if err == nil {
				err = s.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("concurrent Open: %v", err)
		}
	}

	s, err := Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	all, err := migrate.List(migrations())
	if err != nil {
		t.Fatal(err)
	}
	var n, maxVersion int
	if err := s.pool.QueryRow(ctx, `SELECT count(*), max(version) FROM agentmcp_schema_migrations`).Scan(&n, &maxVersion); err != nil {
		t.Fatal(err)
	}
	if n != len(all) || maxVersion != all[len(all)-1].Version {
		t.Fatalf("agentmcp_schema_migrations has %d rows up to version %d, want %d up to %d", n, maxVersion, len(all), all[len(all)-1].Version)
	}
	if _, err := s.pool.Exec(ctx, `INSERT INTO agentmcp_schema_migrations (version, name, applied_at) VALUES (9999, '9999_future.sql', now())`); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, dsn, nil); err == nil || !strings.Contains(err.Error(), "newer than this build") {
		t.Fatalf("Open of a database from a newer build: %v", err)
	}
}

// TestMigrationAtomic checks that a failing migration leaves nothing behind,
// not even the migrations before it in the same run.
func TestMigrationAtomic(t *testing.T) {
	ctx := t.Context()
	pool, err := pgxpool.New(ctx, pg.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	fsys := fstest.MapFS{
		"0001_one.sql": {Data: []byte(`CREATE TABLE one (x INTEGER);`)},
		"0002_two.sql": {Data: []byte(`CREATE TABLE two (x INTEGER); INSERT INTO nowhere VALUES (1);`)},
	}
	if err := applyMigrations(ctx, pool, fsys, time.Now()); err == nil || !strings.Contains(err.Error(), "0002_two.sql") {
		t.Fatalf("applyMigrations with a failing migration: %v", err)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE tablename IN ('one', 'two', 'agentmcp_schema_migrations')`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("%d tables left by a failed migration run, want 0", n)
	}

	fsys["0002_two.sql"] = &fstest.MapFile{Data: []byte(`CREATE TABLE two (x INTEGER);`)}
	for range 2 {
		if err := applyMigrations(ctx, pool, fsys, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM agentmcp_schema_migrations`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("agentmcp_schema_migrations has %d rows (%v), want 2", n, err)
	}
}

// TestLockPoolExhaustion runs more WithLock holders of distinct locks than
// the lock pool has connections, each using the Store inside fn: the
// holders wait for lock connections, and never for each other's.
func TestLockPoolExhaustion(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	s, err := Open(ctx, pg.Database(t)+"&pool_max_conns=2", &Options{LockConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := range 20 {
		wg.Go(func() {
			id := fmt.Sprintf("s%d", i)
			errs <- s.WithLock(ctx, "c/i", id, "refresh", func(ctx context.Context) error {
				if err := s.KVPut(ctx, "c/i", id, "token", []byte("t"), time.Time{}); err != nil {
					return err
				}
				_, err := s.KVGet(ctx, "c/i", id, "token")
				return err
			})
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	if _, err := Open(t.Context(), "postgres://u:hunter2@[::1", nil); err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("Open of a malformed DSN: %v (want an error without the password)", err)
	}
}
