//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd || solaris)

package sqlite

// LockFileAs would lock the SQLite database at dbPath against other
// processes that would own its agents; on this system it does nothing and
// returns a release that does nothing. Run one serving process per
// database file.
func LockFileAs(dbPath, holder string) (release func() error, err error) {
	return func() error { return nil }, nil
}
