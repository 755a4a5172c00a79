package sqlite

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLockFileUnwritable: a lock file that takes the lock but cannot hold
// the holder's pid (here a link to /dev/full, which cannot be truncated)
// fails LockFile and is not kept locked, rather than being taken with no
// pid for another process's LockedError.
func TestLockFileUnwritable(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full:", err)
	}
	db := filepath.Join(t.TempDir(), "agentmcp.db")
	if err := os.Symlink("/dev/full", lockPath(db)); err != nil {
		t.Fatal(err)
	}
	release, err := LockFile(db)
	if err == nil {
		release()
		t.Fatal("LockFile took a lock whose file cannot hold the pid")
	}
	if !strings.Contains(err.Error(), "sqlite: lock") {
		t.Errorf("error %q does not name the lock", err)
	}
}
