package pgtest

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

var pg = New()

func TestMain(m *testing.M) {
	os.Exit(pg.Main(m))
}

func connect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// TestDatabases checks that each call gives a separate database on a
// server that listens on 127.0.0.1 only and wants the password.
func TestDatabases(t *testing.T) {
	a, b := pg.Database(t), pg.Database(t)
	if a == b {
		t.Fatalf("two Database calls returned the same DSN %s", a)
	}
	ca, cb := connect(t, a), connect(t, b)
	if _, err := ca.Exec(t.Context(), `CREATE TABLE only_in_a (x int)`); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := cb.QueryRow(t.Context(), `SELECT count(*) FROM pg_tables WHERE tablename = 'only_in_a'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("table of database a seen in b: %d, %v", n, err)
	}
	var listen string
	if err := ca.QueryRow(t.Context(), `SHOW listen_addresses`).Scan(&listen); err != nil || listen != "127.0.0.1" {
		t.Fatalf("listen_addresses = %q, %v", listen, err)
	}

	cfg, err := pgx.ParseConfig(a)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Password = "wrong"
	conn, err := pgx.ConnectConfig(t.Context(), cfg)
	var pe *pgconn.PgError
	if err == nil {
		conn.Close(context.Background())
	}
	if !errors.As(err, &pe) || pe.Code != "28P01" {
		t.Fatalf("connect with a wrong password: %v, want invalid_password", err)
	}
}

// TestStop checks that Stop stops the server, removes its directory and can
// be called again.
func TestStop(t *testing.T) {
	s := New()
	dsn := s.Database(t)
	connect(t, dsn)
	dir := s.dir
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("directory %s after Stop: %v", dir, err)
	}
	if conn, err := pgx.Connect(t.Context(), dsn); err == nil {
		conn.Close(context.Background())
		t.Fatal("server still accepts connections after Stop")
	}
}

// TestNotInstalled checks that a missing PostgreSQL skips the test with the
// install hint.
func TestNotInstalled(t *testing.T) {
	t.Setenv(EnvBin, t.TempDir())
	t.Setenv(EnvRequire, "")
	s := New()
	defer s.Stop()
	var sub *testing.T
	t.Run("database", func(t *testing.T) {
		sub = t
		s.Database(t)
		t.Error("Database returned without PostgreSQL")
	})
	if !sub.Skipped() {
		t.Fatal("test was not skipped")
	}
	if !errors.Is(s.err, errNotInstalled) || !strings.Contains(installHint, "install-test-deps") {
		t.Fatalf("start error %v", s.err)
	}
}

func TestStopBeforeStart(t *testing.T) {
	s := New()
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
}

// TestHaltResume checks that Halt stops the server (no connection is
// accepted), Resume starts it again with the data kept on the same port,
// and Stop after a Halt reports no error.
func TestHaltResume(t *testing.T) {
	s := New()
	if err := s.Halt(); err == nil {
		t.Fatal("Halt before the first Database call: no error")
	}
	dsn := s.Database(t)
	if _, err := connect(t, dsn).Exec(t.Context(), `CREATE TABLE kept (x int)`); err != nil {
		t.Fatal(err)
	}
	if err := s.Halt(); err != nil {
		t.Fatal(err)
	}
	if conn, err := pgx.Connect(t.Context(), dsn); err == nil {
		conn.Close(context.Background())
		t.Fatal("server accepts connections after Halt")
	}
	if err := s.Resume(); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := connect(t, dsn).QueryRow(t.Context(), `SELECT count(*) FROM pg_tables WHERE tablename = 'kept'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("table after Resume: %d, %v", n, err)
	}
	if err := s.Halt(); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(); err != nil {
		t.Fatalf("Stop after Halt: %v", err)
	}
}
