package main

import (
	"bufio"
	"bytes"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// buildBinary builds agentmcp into a directory of the test's and returns
// its path; the test is skipped when there is no go tool to build it.
func buildBinary(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go tool to build the binary: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "agentmcp")
	if out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// serveStarted matches the line serve prints once it serves.
var serveStarted = regexp.MustCompile(`dashboard at (http://127\.0\.0\.1:\d+)/`)

// startServeProcess runs bin serve on a free 127.0.0.1 port with args
// after it, waits until it serves and returns the process and its base
// URL. The process is killed (SIGKILL) and waited for when the test ends;
// one that does not start fails the test with its stderr.
func startServeProcess(t *testing.T, bin string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
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
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if m := serveStarted.FindStringSubmatch(sc.Text()); m != nil {
			go io.Copy(io.Discard, out)
			return cmd, m[1]
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	t.Fatalf("serve did not start: %v, stderr %q", sc.Err(), stderr.String())
	return nil, ""
}
