package sqlite

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// lockChild runs in a child process. Mode "hold" takes the lock of db,
// prints "locked" and keeps it until its stdin closes (or it is killed);
// mode "try" takes it and prints "acquired", or "locked-by PID" when
// another process holds it.
func lockChild(mode, db string) int {
	release, err := LockFileAs(db, os.Getenv("AGENTMCP_TEST_HOLDER"))
	var locked *LockedError
	switch {
	case errors.As(err, &locked) && mode == "try":
		if locked.Holder != "" {
			fmt.Printf("locked-by %d %s\n", locked.PID, locked.Holder)
			return 0
		}
		fmt.Printf("locked-by %d\n", locked.PID)
		return 0
	case err != nil:
		fmt.Println("error:", err)
		return 1
	}
	defer release()
	if mode == "hold" {
		fmt.Println("locked")
		io.Copy(io.Discard, os.Stdin)
		return 0
	}
	fmt.Println("acquired")
	return 0
}

// child starts this test binary as a lockChild and returns it with its
// first line of output (after which a holder holds the lock).
func child(t *testing.T, mode, db string) (*exec.Cmd, string, io.WriteCloser) {
	t.Helper()
	return childAs(t, mode, db, "")
}

// childAs is child, whose lock says it is holder (LockFileAs).
func childAs(t *testing.T, mode, db, holder string) (*exec.Cmd, string, io.WriteCloser) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "AGENTMCP_TEST_LOCK_CHILD="+mode, "AGENTMCP_TEST_DB="+db, "AGENTMCP_TEST_HOLDER="+holder)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("lock child %s: %v", mode, err)
	}
	return cmd, strings.TrimSpace(line), stdin
}

// try runs a "try" child on db and returns what it printed.
func try(t *testing.T, db string) string {
	t.Helper()
	cmd, line, stdin := child(t, "try", db)
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("lock child try: %v (printed %q)", err, line)
	}
	return line
}

// wantPID checks the lock file of db names pid ("" when the file is empty).
func wantPID(t *testing.T, db, pid string) {
	t.Helper()
	b, err := os.ReadFile(db + ".lock")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(b)); got != pid {
		t.Fatalf("lock file holds %q, want %q", got, pid)
	}
}

// TestLockFile checks the lock across processes: a second locker fails
// with the holder's process id, whether the holder is this process or a
// child; a holder killed with SIGKILL leaves a stale file that does not
// block the next locker.
func TestLockFile(t *testing.T) {
	db := filepath.Join(t.TempDir(), "agentmcp.db")
	release, err := LockFile(db)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := LockFile(db); err == nil {
		again()
		release()
		t.Skip("LockFile does not lock on this system")
	}
	me := strconv.Itoa(os.Getpid())
	wantPID(t, db, me)
	if got := try(t, db); got != "locked-by "+me {
		t.Fatalf("another process locking a held database printed %q, want %q", got, "locked-by "+me)
	}
	if err := release(); err != nil {
		t.Fatalf("release: %v", err)
	}
	if err := release(); err != nil {
		t.Fatalf("second release: %v", err)
	}
	wantPID(t, db, "")
	if got := try(t, db); got != "acquired" {
		t.Fatalf("another process locking a released database printed %q, want acquired", got)
	}

	holder, line, _ := child(t, "hold", db)
	if line != "locked" {
		t.Fatalf("holder printed %q", line)
	}
	pid := holder.Process.Pid
	_, err = LockFile(db)
	var locked *LockedError
	if !errors.As(err, &locked) || locked.PID != pid || locked.Path != db {
		t.Fatalf("LockFile of a database another process holds: %v, want a *LockedError with pid %d", err, pid)
	}
	want := fmt.Sprintf("database %s is already served by another agentmcp serve (pid %d); stop it first, or use --postgres to run several", db, pid)
	if err.Error() != want {
		t.Fatalf("error %q, want %q", err, want)
	}

	if err := holder.Process.Kill(); err != nil { // SIGKILL: no clean-up in the holder
		t.Fatal(err)
	}
	holder.Wait()
	wantPID(t, db, strconv.Itoa(pid)) // the stale file
	release, err = LockFile(db)
	if err != nil {
		t.Fatalf("LockFile after the holder was killed: %v", err)
	}
	wantPID(t, db, me)
	if err := release(); err != nil {
		t.Fatal(err)
	}
}

// TestLockFileMemory: an in-memory database is private to its Store, so
// it needs no lock, and no file is made for it.
func TestLockFileMemory(t *testing.T) {
	t.Chdir(t.TempDir())
	for range 2 {
		release, err := LockFile(Memory)
		if err != nil {
			t.Fatalf("LockFile(Memory): %v", err)
		}
		defer release()
	}
	if entries, _ := os.ReadDir("."); len(entries) != 0 {
		t.Fatalf("LockFile(Memory) made %v", entries[0].Name())
	}
}

// TestLockFileAs: a holder that says what it is is named, with its pid,
// in the LockedError of another process's LockFile and LockFileAs; the
// lock file keeps the pid on its first line, which a holder that says
// nothing (LockFile) writes alone.
func TestLockFileAs(t *testing.T) {
	db := filepath.Join(t.TempDir(), "agentmcp.db")
	release, err := LockFileAs(db, " agentmcp\tcall\n--db ")
	if err != nil {
		t.Fatal(err)
	}
	me := strconv.Itoa(os.Getpid())
	wantPID(t, db, me+"\nagentmcp call --db")
	if got := try(t, db); got != "locked-by "+me+" agentmcp call --db" {
		t.Fatalf("another process locking a database held as agentmcp call printed %q", got)
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}

	holder, line, _ := childAs(t, "hold", db, "agentmcp serve")
	if line != "locked" {
		t.Fatalf("holder printed %q", line)
	}
	pid := holder.Process.Pid
	for _, lock := range []func(string) (func() error, error){LockFile, func(db string) (func() error, error) { return LockFileAs(db, "agentmcp ls") }} {
		_, err = lock(db)
		var locked *LockedError
		if !errors.As(err, &locked) || locked.PID != pid || locked.Holder != "agentmcp serve" {
			t.Fatalf("lock of a database agentmcp serve holds: %v, want a *LockedError with pid %d and its holder", err, pid)
		}
		if want := fmt.Sprintf("database %s is in use by agentmcp serve (pid %d)", db, pid); err.Error() != want {
			t.Fatalf("error %q, want %q", err, want)
		}
	}
}

func TestLockedErrorUnknownPID(t *testing.T) {
	err := &LockedError{Path: "./agentmcp.db"}
	want := "database ./agentmcp.db is already served by another agentmcp serve (pid unknown); stop it first, or use --postgres to run several"
	if err.Error() != want {
		t.Fatalf("error %q, want %q", err, want)
	}
}
