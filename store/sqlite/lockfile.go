package sqlite

import (
	"fmt"
	"strconv"
	"strings"
)

// LockedError is returned by LockFile when another process holds the lock
// of the database.
type LockedError struct {
	// Path is the database path given to LockFile.
	Path string
	// PID is the process holding the lock, 0 when it could not be read.
	PID int
	// Holder is what the holder said it is (LockFileAs), empty when it
	// said nothing (LockFile) or could not be read.
	Holder string
}

func (e *LockedError) Error() string {
	pid := "pid unknown"
	if e.PID > 0 {
		pid = "pid " + strconv.Itoa(e.PID)
	}
	if e.Holder != "" {
		return fmt.Sprintf("database %s is in use by %s (%s)", e.Path, e.Holder, pid)
	}
	return fmt.Sprintf("database %s is already served by another agentmcp serve (%s); stop it first, or use --postgres to run several", e.Path, pid)
}

// LockFile is LockFileAs with no holder: a LockedError of another locker
// names its process id only.
func LockFile(dbPath string) (release func() error, err error) {
	return LockFileAs(dbPath, "")
}

// lockPath returns the lock file of the database at dbPath.
func lockPath(dbPath string) string { return dbPath + ".lock" }

// lockContents is what a holder writes in the lock file: its process id
// on the first line, then what it is, if it says.
func lockContents(pid int, holder string) []byte {
	s := strconv.Itoa(pid) + "\n"
	if holder = strings.Join(strings.Fields(holder), " "); holder != "" {
		s += holder + "\n"
	}
	return []byte(s)
}

// parseLock reads the process id and the holder from a lock file's
// contents; pid is 0 when there is none.
func parseLock(b []byte) (pid int, holder string) {
	first, rest, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil || pid <= 0 {
		return 0, ""
	}
	holder, _, _ = strings.Cut(rest, "\n")
	return pid, strings.TrimSpace(holder)
}
