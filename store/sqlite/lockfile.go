package sqlite

import (
	"fmt"
	"strconv"
)

// LockedError is returned by LockFile when another process holds the lock
// of the database.
type LockedError struct {
	// Path is the database path given to LockFile.
	Path string
	// PID is the process holding the lock, 0 when it could not be read.
	PID int
}

func (e *LockedError) Error() string {
	pid := "pid unknown"
	if e.PID > 0 {
		pid = "pid " + strconv.Itoa(e.PID)
	}
	return fmt.Sprintf("database %s is already served by another agentmcp serve (%s); stop it first, or use --postgres to run several", e.Path, pid)
}

// lockPath returns the lock file of the database at dbPath.
func lockPath(dbPath string) string { return dbPath + ".lock" }
