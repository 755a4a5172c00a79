//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd || solaris

package sqlite

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// LockFile takes the lock that makes one process at a time serve the
// SQLite database at dbPath: an exclusive flock on the file dbPath+".lock"
// (created if missing, mode 0600), into which it writes the process id. It
// does not wait: when another process holds the lock it returns a
// *LockedError naming that process. release empties the file and unlocks;
// it is idempotent. Memory needs no lock (its release does nothing).
//
// The kernel releases the lock when the process ends, however it ends
// (kill -9 included), so a lock file left by a dead process never blocks;
// the file itself stays, harmless. The descriptor is not inherited by child
// processes (stdio MCP servers), which therefore cannot keep the lock after
// the process dies. Two LockFile calls in one process also exclude each
// other. The lock guards only against processes that take it too: Open
// does not, so commands that only read or briefly write the database still
// can.
func LockFile(dbPath string) (release func() error, err error) {
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
			return nil, &LockedError{Path: dbPath, PID: holder(f)}
		}
		return nil, fmt.Errorf("sqlite: lock %s: %w", path, err)
	}
	pid := []byte(strconv.Itoa(os.Getpid()) + "\n")
	err = f.Truncate(0)
	if err == nil {
		_, err = f.WriteAt(pid, 0)
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

// holder reads the process id of the lock's holder from the lock file. A
// holder writes it right after taking the lock, so an empty file is read
// again for a moment before giving up (PID 0).
func holder(f *os.File) int {
	for range 50 {
		if pid := readPID(f); pid != 0 {
			return pid
		}
		time.Sleep(2 * time.Millisecond)
	}
	return 0
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

// readPID returns the process id written in the lock file f, 0 if none.
func readPID(f *os.File) int {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}
