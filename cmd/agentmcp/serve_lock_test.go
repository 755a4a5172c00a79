package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeLock: a second serve on the SQLite database a first serve (a
// process of the built binary) is using stops at once, before serving, with
// an error naming the first's process id; once the first is killed with
// SIGKILL, serve starts on the same database.
func TestServeLock(t *testing.T) {
	t.Setenv("AGENTMCP_SECRET_KEY", "")
	t.Setenv(envToken, "")
	bin := buildBinary(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "agentmcp.db")
	first, _ := startServeProcess(t, bin, "--db", db)

	// The second serve, in-process: it must end by itself, before serving
	// (if it serves, it is stopped and the test fails).
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	pr, pw := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan error, 1)
	go func() {
		err := run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--db", db}, pw, &stderr)
		pw.Close()
		done <- err
	}()
	var stdout strings.Builder
	for lines := bufio.NewScanner(pr); lines.Scan(); {
		stdout.WriteString(lines.Text() + "\n")
		if serveStarted.MatchString(lines.Text()) {
			cancel()
		}
	}
	err := <-done
	r := result{stdout: stdout.String(), stderr: stderr.String(), err: err, code: exitCode(err)}
	if r.stdout != "" {
		t.Fatalf("the second serve printed %q, want nothing", r.stdout)
	}
	want := fmt.Sprintf("agentmcp: database %s is already served by another agentmcp serve (pid %d); stop it first, or use --postgres to run several", db, first.Process.Pid)
	if got := r.errorLine(t, exitFailure); got != want {
		t.Fatalf("second serve on one database: %q, want %q", got, want)
	}

	if err := first.Process.Kill(); err != nil { // SIGKILL: the lock file stays, with its pid
		t.Fatal(err)
	}
	first.Wait()
	s := startServe(t, "--db", db)
	if res := s.stop(); res.err != nil {
		t.Fatalf("serve after the first was killed: %v, stderr %q", res.err, res.stderr)
	}
}
