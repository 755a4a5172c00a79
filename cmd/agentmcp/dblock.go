package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/agentmcp/agentmcp/store/sqlite"
)

// The agents of a SQLite database have one owner at a time: the process
// holding its lock file (sqlite.LockFileAs), which connects their
// servers, runs and settles their calls, approvals and tasks. agentmcp
// serve holds it while it runs; a terminal command opening the database
// with --db holds it for its duration when it acts on the agent, so that
// a serve started meanwhile stops before serving rather than run beside it.
// While another process holds it, a command that only reads reads the
// database read-only, add and import store their change and hand it over
// (handover.go), and the others are refused, naming the holder.

// serveHolder is what serve says it is in the lock file.
const serveHolder = "agentmcp serve"

// access says what a terminal command does with the agent of a database.
type access int

const (
	// owning: the command acts as the agent's owner (connects its
	// servers, calls, answers, changes its settings): it holds the lock,
	// and is refused while another process does.
	owning access = iota
	// reading: the command only reads the stored agent, with no lock:
	// beside a process that holds it, the database is opened read-only
	// and nothing is written.
	reading
	// handing: add and import. Beside a serve they store their change
	// without owning the agent (connecting only the servers they add),
	// then hand it to that serve; otherwise they are owning.
	handing
)

// lockTarget settles who owns the agents of the SQLite database of the
// flags for this command: it returns the lock to release when the
// command holds it, and sets f.beside to the holder beside which the
// command runs, if any. readOnly says that the command must open the
// database read-only: it reads beside a holder, or cannot tell whether
// there is one. A command that may not run beside the holder gets an
// *inUseError.
func (f *targetFlags) lockTarget() (release func() error, readOnly bool, err error) {
	if f.access == reading {
		if _, err := os.Stat(f.db + ".lock"); errors.Is(err, fs.ErrNotExist) {
			return nil, false, nil // no process ever held it
		}
	}
	release, err = sqlite.LockFileAs(f.db, "agentmcp "+f.command)
	var locked *sqlite.LockedError
	switch {
	case err == nil && f.access == reading:
		release() // only to learn that nobody holds it
		return nil, false, nil
	case err == nil:
		return release, false, nil
	case f.access == reading && !errors.As(err, &locked):
		return nil, true, nil // a lock file it cannot take (permissions): read only
	case !errors.As(err, &locked):
		return nil, false, err
	case f.access == reading:
		f.beside = locked
		return nil, true, nil
	case f.access == handing && isServe(locked):
		f.beside = locked
		return nil, false, nil
	}
	return nil, false, newInUseError(f.db, locked)
}

// isServe reports whether the holder of a lock is agentmcp serve (one that
// says nothing is one from before holders said what they are: a serve).
func isServe(l *sqlite.LockedError) bool {
	return l.Holder == "" || l.Holder == serveHolder
}

// inUseError refuses a command that would act as the owner of agents
// that another process owns.
type inUseError struct {
	locked *sqlite.LockedError
	url    string // where the serve holding it listens, when known
}

func newInUseError(db string, l *sqlite.LockedError) *inUseError {
	e := &inUseError{locked: l}
	if isServe(l) {
		if sf, ok := readServeFile(db); ok && sf.PID == l.PID {
			e.url = sf.URL
		}
	}
	return e
}

func (e *inUseError) Error() string {
	l := e.locked
	pid := "pid unknown"
	if l.PID > 0 {
		pid = fmt.Sprintf("pid %d", l.PID)
	}
	switch {
	case !isServe(l):
		return fmt.Sprintf("database %s is in use by %s (%s), which owns its agents: try again once it ends", l.Path, l.Holder, pid)
	case e.url != "":
		return fmt.Sprintf("database %s is in use by agentmcp serve (%s, %s), which owns its agents: use --server %s, or stop it first", l.Path, pid, e.url, e.url)
	}
	return fmt.Sprintf("database %s is in use by agentmcp serve (%s), which owns its agents: use --server with its address, or stop it first", l.Path, pid)
}

func (e *inUseError) Unwrap() error { return e.locked }

// lockForServe takes the lock of the SQLite database at db for serve. A
// command that only reads holds it for an instant, to learn whether
// another process does (lockTarget): a holder that is not a serve is
// tried again for a moment before serve gives up.
func lockForServe(ctx context.Context, db string) (release func() error, err error) {
	deadline := time.Now().Add(time.Second)
	for {
		release, err := sqlite.LockFileAs(db, serveHolder)
		var locked *sqlite.LockedError
		if !errors.As(err, &locked) {
			return release, err
		}
		if isServe(locked) || time.Now().After(deadline) {
			return nil, serveLockError(locked)
		}
		t := time.NewTimer(20 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// serveLockError is serve's error when another process holds the lock
// of its database.
func serveLockError(l *sqlite.LockedError) error {
	pid := "pid unknown"
	if l.PID > 0 {
		pid = fmt.Sprintf("pid %d", l.PID)
	}
	if isServe(l) {
		return fmt.Errorf("database %s is already served by another agentmcp serve (%s); stop it first, or use --postgres to run several", l.Path, pid)
	}
	return fmt.Errorf("database %s is in use by %s (%s), which opened its agents directly (--db): start serve once it ends", l.Path, l.Holder, pid)
}
