// Package pgtest runs a throwaway PostgreSQL server for a test binary and
// gives each test its own database on it. It is for tests only.
//
// The server is the local PostgreSQL installation's (initdb, pg_ctl and
// postgres from $AGENTMCP_PG_BIN, from PATH, or from the newest
// /usr/lib/postgresql/<version>/bin); scripts/install-test-deps installs
// Debian's postgresql package when none is there. The server's cluster lives
// in a temporary directory, listens on 127.0.0.1 only, on a free port, with a
// random password, and runs without fsync: nothing in it is meant to
// survive. initdb refuses to run as root, so when the tests run as root the
// PostgreSQL commands run as the postgres user (runuser -u postgres).
//
// # Usage
//
// One Server per test binary, started on first use and stopped in TestMain:
//
//	var pg = pgtest.New()
//
//	func TestMain(m *testing.M) {
//		code := m.Run()
//		if err := pg.Stop(); err != nil {
//			fmt.Fprintln(os.Stderr, err)
//			code = 1
//		}
//		os.Exit(code)
//	}
//
//	func TestSomething(t *testing.T) {
//		dsn := pg.Database(t) // a new empty database, dropped when t ends
//		...
//	}
//
// When PostgreSQL is not installed, Database skips the test with a message
// saying to run scripts/install-test-deps, or fails it when
// AGENTMCP_REQUIRE_PEERS=1 (as the project's test script sets).
//
// Halt stops the server's process and keeps its data; Resume starts it
// again on the same port: a database outage for tests of what clients do
// meanwhile. Freeze stops every process of the server with SIGSTOP (a
// database that hangs: connections open, no answer) until the thaw it
// returns, or the test's end, sends SIGCONT.
//
// If the test binary dies without calling Stop (a panic, a timeout, a
// SIGKILL), a watchdog process started with the server notices that the
// binary is gone, stops the server and removes its directory.
//
// # Concurrency
//
// Database is safe to call from parallel tests. Stop may be called more
// than once and from any goroutine.
//
// # Errors
//
// Database reports through t: a server that cannot start fails every test
// that asks for a database, with initdb's or the server's log in the
// message. Stop returns the error of stopping the server.
package pgtest
