//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd || solaris

package sqlite

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// LockFileAs takes the lock that makes one process at a time own the
// agents of the SQLite database at dbPath: an exclusive flock on the file
// dbPath+".lock" (created if missing, mode 0600), into which it writes the
// process id and holder, what the process is ("agentmcp serve"), for the
// LockedError of another locker. It does not wait: when another process
// holds the lock it returns a *LockedError naming that process. release
// empties the file and unlocks; it is idempotent. Memory needs no lock
// (its release does nothing).
//
// The kernel releases the lock when the process ends, however it ends
// (kill -9 included), so a lock file left by a dead process never blocks;
// the file itself stays, harmless. The descriptor is not inherited by child
// processes (stdio MCP servers), which therefore cannot keep the lock after
// the process dies. Two LockFileAs calls in one process also exclude each
// other. The lock guards only against processes that take it too: Open
// does not, so a program that only reads the database (Options.ReadOnly)
// can beside its owner.
func LockFileAs(dbPath, holder string) (release func() error, err error) {
	if dbPath == Memory {
		return func() error { return nil }, nil // private to its Store: nothing to share
	}
	path := lockPath(dbPath)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600) // close-on-exec, as Go opens every file
	if err != nil {
		return nil, fmt.Errorf("sqlite: lock %s: %w", path, err)
	}
	if err := flock(f, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			pid, by := heldBy(f)
			return nil, &LockedError{Path: dbPath, PID: pid, Holder: by}
		}
		return nil, fmt.Errorf("sqlite: lock %s: %w", path, err)
	}
	err = f.Truncate(0)
	if err == nil {
		_, err = f.WriteAt(lockContents(os.Getpid(), holder), 0)
	}
	if err != nil {
		f.Close() // releases the lock
		return nil, fmt.Errorf("sqlite: lock %s: %w", path, err)
	}
	var once sync.Once
	var closeErr error
	return func() error {
		once.Do(func() {
			f.Truncate(0) // the process id is no longer true
			closeErr = f.Close()
		})
		return closeErr
	}, nil
}

// heldBy reads the process id and the holder of the lock from the lock
// file. A holder writes them right after taking the lock, so an empty
// file is read again for a moment before giving up (PID 0).
func heldBy(f *os.File) (pid int, holder string) {
	for range 50 {
		if pid, holder := readLock(f); pid != 0 {
			return pid, holder
		}
		time.Sleep(2 * time.Millisecond)
	}
	return 0, ""
}

// flock is unix.Flock, retried when a signal interrupts it.
func flock(f *os.File, how int) error {
	for {
		err := unix.Flock(int(f.Fd()), how)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// readLock returns the process id and holder written in the lock file f,
// 0 and "" if none.
func readLock(f *os.File) (pid int, holder string) {
	b := make([]byte, 256)
	n, _ := f.ReadAt(b, 0)
	return parseLock(b[:n])
}
