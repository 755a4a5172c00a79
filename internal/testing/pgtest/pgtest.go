package pgtest

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/goleak"
)

// Environment variables read by this package.
const (
	// EnvBin names the directory holding initdb, pg_ctl and postgres.
	EnvBin = "AGENTMCP_PG_BIN"
	// EnvRequire, set to 1, turns the skip for a missing PostgreSQL into a
	// failure.
	EnvRequire = "AGENTMCP_REQUIRE_PEERS"
)

const installHint = "run scripts/install-test-deps"

// startTimeout bounds initdb, the server's start (pg_ctl -w) and its stop.
const startTimeout = 2 * time.Minute

// errNotInstalled is wrapped by start's error when there is no PostgreSQL.
var errNotInstalled = errors.New("PostgreSQL server binaries (initdb, pg_ctl) not found")

// Server is a throwaway PostgreSQL server, started by the first Database
// call.
type Server struct {
	once sync.Once
	err  error // of the start, set once

	// Set by start.
	dir      string // temporary root: data, socket, log
	bin      string
	password string
	port     int
	watchdog *exec.Cmd
	stopPipe io.WriteCloser // closing it makes the watchdog stop the server
	// pgctl runs pg_ctl with its arguments (as the postgres user when
	// needed); startOpts are the server options of pg_ctl start -o.
	pgctl     func(ctx context.Context, args ...string) error
	startOpts string
	halted    bool // by Halt, until Resume

	mu sync.Mutex
	// n counts databases, for names.
	n int
	// stopped is set by Stop.
	stopped bool
	stopErr error
}

// New returns a Server that is not started yet. It does no I/O.
func New() *Server { return &Server{} }

// Database returns the connection string of a new, empty database on the
// server, starting the server if this is the first call. The database is
// dropped when t ends. If PostgreSQL is not installed, Database skips t (or
// fails it when AGENTMCP_REQUIRE_PEERS=1).
func (s *Server) Database(t testing.TB) string {
	t.Helper()
	s.once.Do(func() { s.err = s.start() })
	if s.err != nil {
		if errors.Is(s.err, errNotInstalled) {
			msg := fmt.Sprintf("pgtest: %v (%s)", s.err, installHint)
			if os.Getenv(EnvRequire) == "1" {
				t.Fatalf("%s; failing because %s=1", msg, EnvRequire)
			}
			t.Skip(msg)
		}
		t.Fatalf("pgtest: %v", s.err)
	}

	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		t.Fatal("pgtest: Database after Stop")
	}
	s.n++
	name := fmt.Sprintf("test_%d", s.n)
	s.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := s.admin(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		s.mu.Lock()
		stopped := s.stopped
		s.mu.Unlock()
		if stopped {
			return // went with the server
		}
		ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
		defer cancel()
		if err := s.admin(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	return s.dsn(name)
}

// dsn returns the connection string of database name.
func (s *Server) dsn(name string) string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.UserPassword("postgres", s.password),
		Host:     net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)),
		Path:     "/" + name,
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

// admin runs one statement on the postgres database.
func (s *Server) admin(ctx context.Context, sql string) error {
	conn, err := pgx.Connect(ctx, s.dsn("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, sql)
	return err
}

// Main runs the tests of m for a TestMain, then stops s and, when every
// test passed, checks that no goroutine was leaked (goleak). It returns
// the exit code: os.Exit(pg.Main(m)).
func (s *Server) Main(m *testing.M) int {
	code := m.Run()
	if err := s.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	if code == 0 {
		if err := findLeaks(10 * time.Second); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	return code
}

// findLeaks returns goleak's report of the goroutines still running after
// the tests, once they have kept running for patience. goleak alone gives
// goroutines that are ending (a closed connection's reader, a killed
// child's wait) about half a second, short on a loaded machine; a leaked
// goroutine runs on whatever the wait.
func findLeaks(patience time.Duration) error {
	deadline := time.Now().Add(patience)
	for {
		err := goleak.Find()
		if err == nil || time.Now().After(deadline) {
			return err
		}
	}
}

// Stop stops the server, if it was started, and removes its directory.
// Later calls return the first call's result.
func (s *Server) Stop() error {
	s.once.Do(func() { s.err = errors.New("stopped before start") })
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return s.stopErr
	}
	s.stopped = true
	if s.watchdog != nil {
		s.stopPipe.Close()
		// After a failed start there may be no server to stop: only the
		// start's error counts, and Database has reported it.
		// A halted server has nothing to stop: pg_ctl stop fails.
		if err := s.watchdog.Wait(); err != nil && s.err == nil && !s.halted {
			s.stopErr = fmt.Errorf("pgtest: stop server: %v%s", err, s.logTail())
		}
	}
	return s.stopErr
}

// start runs initdb and starts the server.
func (s *Server) start() error {
	bin, err := findBin()
	if err != nil {
		return err
	}
	s.bin = bin

	var asPostgres []string // command prefix that runs as the postgres user
	var owner *user.User
	if os.Geteuid() == 0 {
		runuser, err := exec.LookPath("runuser")
		if err != nil {
			return fmt.Errorf("running as root needs runuser (util-linux) to run PostgreSQL as the postgres user: %w", err)
		}
		if owner, err = user.Lookup("postgres"); err != nil {
			return fmt.Errorf("running as root needs a postgres user to run PostgreSQL as (%s): %w", installHint, err)
		}
		asPostgres = []string{runuser, "-u", "postgres", "--"}
	}

	// own gives a file to the user the server runs as.
	own := func(path string) error {
		if owner == nil {
			return nil
		}
		uid, _ := strconv.Atoi(owner.Uid)
		gid, _ := strconv.Atoi(owner.Gid)
		return os.Chown(path, uid, gid)
	}
	dir, err := os.MkdirTemp("", "agentmcp-pgtest-")
	if err != nil {
		return err
	}
	s.dir = dir
	if err := own(dir); err != nil {
		os.RemoveAll(dir)
		return err
	}
	pw := make([]byte, 16)
	rand.Read(pw)
	s.password = hex.EncodeToString(pw)

	// The watchdog owns the server's lifetime: it waits for its stdin to
	// close (Stop, or the death of this process), then stops the server and
	// removes the directory. It runs in its own process group and ignores
	// the terminal's signals, so a Ctrl-C reaches this process and not it.
	stop := append(slices.Clone(asPostgres), filepath.Join(bin, "pg_ctl"), "stop", "-D", s.path("data"), "-m", "fast", "-w",
		"-t", strconv.Itoa(int(startTimeout.Seconds())))
	wd := exec.Command("/bin/sh", append([]string{"-c", watchdogScript, "pgtest-watchdog", dir}, stop...)...)
	wd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	pipe, err := wd.StdinPipe()
	if err != nil {
		os.RemoveAll(dir)
		return err
	}
	if err := wd.Start(); err != nil {
		os.RemoveAll(dir)
		return fmt.Errorf("start watchdog: %w", err)
	}
	s.watchdog, s.stopPipe = wd, pipe

	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	run := func(args ...string) error { return runAs(ctx, asPostgres, dir, args...) }
	s.pgctl = func(ctx context.Context, args ...string) error {
		return runAs(ctx, asPostgres, dir, append([]string{filepath.Join(bin, "pg_ctl")}, args...)...)
	}

	pwfile := s.path("pw")
	if err := os.WriteFile(pwfile, []byte(s.password+"\n"), 0o600); err != nil {
		return err
	}
	if err := own(pwfile); err != nil {
		return err
	}
	if err := run(filepath.Join(bin, "initdb"), "-D", s.path("data"), "-U", "postgres", "--pwfile", pwfile,
		"--auth", "scram-sha-256", "-E", "UTF8", "--locale", "C", "--no-sync"); err != nil {
		return err
	}
	if err := os.Mkdir(s.path("sock"), 0o700); err != nil {
		return err
	}
	if err := own(s.path("sock")); err != nil {
		return err
	}

	// The kernel may hand the free port to someone else before the server
	// binds it; then try another.
	for attempt := 1; ; attempt++ {
		s.port, err = freePort()
		if err != nil {
			return err
		}
		opts := fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -k %s -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300",
			s.port, shellQuote(s.path("sock")))
		err = run(filepath.Join(bin, "pg_ctl"), "start", "-D", s.path("data"), "-l", s.path("log"), "-w",
			"-t", strconv.Itoa(int(startTimeout.Seconds())), "-o", opts)
		if err == nil {
			s.startOpts = opts
			return nil
		}
		if attempt == 5 || !strings.Contains(s.logTail(), "could not bind") {
			return fmt.Errorf("%v%s", err, s.logTail())
		}
	}
}

// runAs runs a PostgreSQL command in dir, as the postgres user when
// asPostgres is its command prefix.
func runAs(ctx context.Context, asPostgres []string, dir string, args ...string) error {
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	if len(asPostgres) > 0 {
		cmd = exec.CommandContext(ctx, asPostgres[0], append(slices.Clone(asPostgres[1:]), args...)...)
	}
	cmd.Dir = dir // the postgres user may not be able to read the test's directory
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v\n%s", filepath.Base(args[0]), err, out)
	}
	return nil
}

// Halt stops the server's process (pg_ctl stop -m fast: clients are
// disconnected) and keeps its data, for a test of a database outage;
// Resume starts it again on the same port. Halt before the first
// Database call, or after Stop, is an error.
func (s *Server) Halt() error {
	if err := s.ready(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := s.pgctl(ctx, "stop", "-D", s.path("data"), "-m", "fast", "-w",
		"-t", strconv.Itoa(int(startTimeout.Seconds()))); err != nil {
		return fmt.Errorf("pgtest: halt: %v%s", err, s.logTail())
	}
	s.mu.Lock()
	s.halted = true
	s.mu.Unlock()
	return nil
}

// Resume starts the server Halt stopped, on the same port, and returns
// once it accepts connections.
func (s *Server) Resume() error {
	if err := s.ready(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := s.pgctl(ctx, "start", "-D", s.path("data"), "-l", s.path("log"), "-w",
		"-t", strconv.Itoa(int(startTimeout.Seconds())), "-o", s.startOpts); err != nil {
		return fmt.Errorf("pgtest: resume: %v%s", err, s.logTail())
	}
	s.mu.Lock()
	s.halted = false
	s.mu.Unlock()
	return nil
}

// ready reports whether the server was started and not stopped.
func (s *Server) ready() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.stopped:
		return errors.New("pgtest: the server is stopped")
	case s.pgctl == nil || s.startOpts == "":
		return errors.New("pgtest: the server is not started (call Database first)")
	}
	return nil
}

// watchdogScript waits for stdin to close, then runs its arguments (pg_ctl
// stop) and removes the directory $1, exiting with pg_ctl's status.
const watchdogScript = `trap '' INT TERM HUP
dir=$1; shift
while read -r _; do :; done
"$@" >/dev/null 2>&1
status=$?
rm -rf "$dir"
exit $status`

func (s *Server) path(name string) string { return filepath.Join(s.dir, name) }

// logTail returns the end of the server's log, for error messages.
func (s *Server) logTail() string {
	b, err := os.ReadFile(s.path("log"))
	if err != nil || len(b) == 0 {
		return ""
	}
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return "\nserver log:\n" + string(b)
}

// findBin returns the directory with initdb and pg_ctl.
func findBin() (string, error) {
	has := func(dir string) bool {
		for _, f := range []string{"initdb", "pg_ctl", "postgres"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				return false
			}
		}
		return true
	}
	if d := os.Getenv(EnvBin); d != "" {
		if !has(d) {
			return "", fmt.Errorf("%w in %s=%s", errNotInstalled, EnvBin, d)
		}
		return d, nil
	}
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil && has(filepath.Dir(real)) {
			return filepath.Dir(real), nil
		}
	}
	// Debian and Ubuntu keep them out of PATH, one directory per version.
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return cmp.Compare(version(a), version(b)) })
	for i := len(dirs) - 1; i >= 0; i-- {
		if has(dirs[i]) {
			return dirs[i], nil
		}
	}
	return "", errNotInstalled
}

// version returns the major version in /usr/lib/postgresql/<version>/bin.
func version(dir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return v
}

// freePort returns a TCP port of 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// shellQuote quotes s for /bin/sh, which pg_ctl runs the server with.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
