package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
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
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go tool to build the binary: %v", err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "agentmcp")
	if out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	db := filepath.Join(dir, "agentmcp.db")
	started := regexp.MustCompile(`dashboard at http://127\.0\.0\.1:\d+/`)

	first := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--db", db)
	var firstErr bytes.Buffer
	first.Stderr = &firstErr
	out, err := first.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		first.Process.Kill()
		first.Wait()
	})
	sc := bufio.NewScanner(out)
	for sc.Scan() && !started.MatchString(sc.Text()) {
	}
	if !started.MatchString(sc.Text()) {
		first.Process.Kill()
		first.Wait()
		t.Fatalf("the first serve did not start: %v, stderr %q", sc.Err(), firstErr.String())
	}
	go io.Copy(io.Discard, out)

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
		if started.MatchString(lines.Text()) {
			cancel()
		}
	}
	err = <-done
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
