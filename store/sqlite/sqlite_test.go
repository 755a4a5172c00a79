package sqlite

import (
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"go.uber.org/goleak"

	"github.com/agentmcp/agentmcp/store"
	"github.com/agentmcp/agentmcp/store/internal/migrate"
	"github.com/agentmcp/agentmcp/store/storetest"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv("AGENTMCP_TEST_LOCK_CHILD"); mode != "" {
		os.Exit(lockChild(mode, os.Getenv("AGENTMCP_TEST_DB")))
	}
	goleak.VerifyTestMain(m)
}

// files gives each test its own directory for its database file.
type files struct {
	mu   sync.Mutex
	dirs map[*testing.T]string
}

func (f *files) dir(t *testing.T) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	d, ok := f.dirs[t]
	if !ok {
		d = t.TempDir()
		f.dirs[t] = d
	}
	return d
}

func TestStore(t *testing.T) {
	f := &files{dirs: map[*testing.T]string{}}
	storetest.Run(t, storetest.Backend{
		Open: func(t *testing.T, opts storetest.Options) store.Store {
			s, err := Open(t.Context(), filepath.Join(f.dir(t), "agentmcp.db"), &Options{Now: opts.Now, Cipher: opts.Cipher})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
		URLColumn: func(t *testing.T, s store.Store, ns, id string) string {
			var u string
			if err := s.(*Store).r.QueryRowContext(t.Context(), `SELECT url FROM servers WHERE namespace = ? AND id = ?`, ns, id).Scan(&u); err != nil {
				t.Fatal(err)
			}
			return u
		},
		SetURLColumn: func(t *testing.T, s store.Store, ns, id, url string) {
			if _, err := s.(*Store).w.ExecContext(t.Context(), `UPDATE servers SET url = ? WHERE namespace = ? AND id = ?`, url, ns, id); err != nil {
				t.Fatal(err)
			}
		},
		// Raw is the database file with its WAL and shared-memory files.
		Raw: func(t *testing.T) []byte {
			entries, err := os.ReadDir(f.dir(t))
			if err != nil {
				t.Fatal(err)
			}
			var raw []byte
			for _, e := range entries {
				b, err := os.ReadFile(filepath.Join(f.dir(t), e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				raw = append(raw, b...)
			}
			return raw
		},
	})
}

// TestPragmas checks the settings of the write connection and of the read
// connections.
func TestPragmas(t *testing.T) {
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "p.db"), &Options{BusyTimeout: 1234 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, tt := range []struct {
		pragma string
		want   string
	}{
		{"journal_mode", "wal"},
		{"synchronous", "2"}, // FULL
		{"foreign_keys", "1"},
		{"busy_timeout", "1234"},
	} {
		for name, db := range map[string]*sql.DB{"writer": s.w, "reader": s.r} {
			var got string
			if err := db.QueryRowContext(t.Context(), "PRAGMA "+tt.pragma).Scan(&got); err != nil {
				t.Fatalf("%s: PRAGMA %s: %v", name, tt.pragma, err)
			}
			if got != tt.want {
				t.Errorf("%s: PRAGMA %s = %s, want %s", name, tt.pragma, got, tt.want)
			}
		}
	}
	var readOnly string
	if err := s.r.QueryRowContext(t.Context(), "PRAGMA query_only").Scan(&readOnly); err != nil || readOnly != "1" {
		t.Errorf("reader: PRAGMA query_only = %s, %v; want 1", readOnly, err)
	}
}

// TestConcurrentOpen opens new files from four goroutines at once (as four
// processes starting together would): all must succeed, whoever converts
// the file to WAL and migrates it.
func TestConcurrentOpen(t *testing.T) {
	ctx := t.Context()
	for round := range 25 {
		path := filepath.Join(t.TempDir(), "m.db")
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Go(func() {
				s, err := Open(ctx, path, nil)
				if err == nil {
					err = s.Close()
				}
				errs[i] = err
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatalf("round %d: concurrent Open: %v", round, err)
		}
	}
}

// TestMigrations checks that migrations are recorded once and that a
// database migrated by a newer build is refused.
func TestMigrations(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "m.db")

	s, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	all, err := migrate.List(migrations())
	if err != nil {
		t.Fatal(err)
	}
	var n, maxVersion int
	if err := s.w.QueryRowContext(ctx, `SELECT count(*), max(version) FROM schema_migrations`).Scan(&n, &maxVersion); err != nil {
		t.Fatal(err)
	}
	if n != len(all) || maxVersion != all[len(all)-1].Version {
		t.Fatalf("schema_migrations has %d rows up to version %d, want %d up to %d", n, maxVersion, len(all), all[len(all)-1].Version)
	}
	if _, err := s.w.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (9999, '9999_future.sql', 0)`); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, path, nil); err == nil || !strings.Contains(err.Error(), "newer than this build") {
		t.Fatalf("Open of a database from a newer build: %v", err)
	}
}

// TestMigrationAtomic checks that a failing migration leaves nothing behind,
// not even the migrations before it in the same run.
func TestMigrationAtomic(t *testing.T) {
	ctx := t.Context()
	db, err := sql.Open("sqlite", dsn(filepath.Join(t.TempDir(), "a.db"), false, false, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	fsys := fstest.MapFS{
		"0001_one.sql": {Data: []byte(`CREATE TABLE one (x INTEGER);`)},
		"0002_two.sql": {Data: []byte(`CREATE TABLE two (x INTEGER); INSERT INTO nowhere VALUES (1);`)},
	}
	if err := applyMigrations(ctx, db, fsys, 0); err == nil || !strings.Contains(err.Error(), "0002_two.sql") {
		t.Fatalf("applyMigrations with a failing migration: %v", err)
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE name IN ('one', 'two', 'schema_migrations')`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("%d tables left by a failed migration run, want 0", n)
	}

	fsys["0002_two.sql"] = &fstest.MapFile{Data: []byte(`CREATE TABLE two (x INTEGER);`)}
	for range 2 {
		if err := applyMigrations(ctx, db, fsys, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("schema_migrations has %d rows (%v), want 2", n, err)
	}
}

// TestMemory checks the in-memory database: usable, concurrent-safe on its
// one connection, and private to its Store.
func TestMemory(t *testing.T) {
	ctx := t.Context()
	a, err := Open(ctx, Memory, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(ctx, Memory, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	if err := a.PutServer(ctx, store.Server{Namespace: "c/i", ID: "x", Name: "n"}); err != nil {
		t.Fatal(err)
	}
	if err := a.KVPut(ctx, "c/i", "x", "state/1", []byte("v"), time.Time{}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for range 20 {
		wg.Go(func() {
			if _, err := a.KVTake(ctx, "c/i", "x", "state/1"); err == nil {
				mu.Lock()
				wins++
				mu.Unlock()
			} else if !errors.Is(err, store.ErrNotFound) {
				t.Error(err)
			}
			if _, err := a.GetServer(ctx, "c/i", "x"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if wins != 1 {
		t.Fatalf("%d takers won, want 1", wins)
	}
	if _, err := b.GetServer(ctx, "c/i", "x"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("second in-memory Store sees the first one's row: %v", err)
	}
}

// TestPathWithSpecialCharacters checks that a file name is not read as a URI.
func TestPathWithSpecialCharacters(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a dir?x=1#frag%20")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "db?mode=ro")
	s, err := Open(t.Context(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutServer(t.Context(), store.Server{Namespace: "c/i", ID: "x"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database not at its path: %v", err)
	}
}

// TestFileMode checks that a new database, WAL included, is readable by its
// owner only.
func TestFileMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mode.db")
	s, err := Open(t.Context(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.KVPut(t.Context(), "c/i", "x", "token", []byte("secret"), time.Time{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{path, path + "-wal"} {
		fi, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", filepath.Base(name), fi.Mode().Perm())
		}
	}
}
