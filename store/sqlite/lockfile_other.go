//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd || solaris)

package sqlite

// LockFile would lock the SQLite database at dbPath against other serving
// processes; on this system it does nothing and returns a release that
// does nothing. Run one serving process per database file.
func LockFile(dbPath string) (release func() error, err error) {
	return func() error { return nil }, nil
}
