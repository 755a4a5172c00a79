package main

import (
	"bytes"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
)

// TestBinary builds agentmcp and runs it as a process: what main adds to
// run (exit statuses, signals) is only visible there.
func TestBinary(t *testing.T) {
	bin := buildBinary(t)
	// agentmcp prepares a run of bin, collecting stdout and stderr.
	agentmcp := func(args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
		cmd := exec.Command(bin, args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		return cmd, &stdout, &stderr
	}
	exitStatus := func(t *testing.T, err error) int {
		t.Helper()
		var xerr *exec.ExitError
		switch {
		case err == nil:
			return 0
		case errors.As(err, &xerr):
			return xerr.ExitCode()
		}
		t.Fatalf("running agentmcp: %v", err)
		return -1
	}

	t.Run("inspect", func(t *testing.T) {
		t.Parallel()
		_, hs := serve(t, mcptest.Stateless)
		cmd, stdout, stderr := agentmcp("inspect", hs.URL)
		if code := exitStatus(t, cmd.Run()); code != 0 || stderr.Len() != 0 {
			t.Fatalf("exit status %d, stderr %q; want 0 and nothing", code, stderr)
		}
		var got inspected
		decode(t, stdout.String(), &got)
		if got.ProtocolVersion != "2026-07-28" || got.Transport != "streamable-http" || len(got.Tools) != len(mcptestTools) {
			t.Errorf("protocolVersion %q, transport %q, %d tools", got.ProtocolVersion, got.Transport, len(got.Tools))
		}
	})

	t.Run("failure", func(t *testing.T) {
		t.Parallel()
		_, hs := serve(t, mcptest.Stateful)
		hs.SetFault(http.StatusInternalServerError)
		cmd, stdout, stderr := agentmcp("inspect", "--header", "Authorization: Bearer bin-secret-0123456789", hs.URL)
		if code := exitStatus(t, cmd.Run()); code != exitFailure {
			t.Errorf("exit status %d, want %d", code, exitFailure)
		}
		want := "agentmcp: connecting to " + hs.URL + " failed (state failed): "
		if !strings.HasPrefix(stderr.String(), want) || strings.Count(stderr.String(), "\n") != 1 ||
			strings.Contains(stderr.String(), "bin-secret") {
			t.Errorf("stderr = %q, want one line starting %q", stderr, want)
		}
		if stdout.Len() != 0 {
			t.Errorf("stdout = %q, want nothing", stdout)
		}
	})

	t.Run("usage", func(t *testing.T) {
		t.Parallel()
		cmd, _, stderr := agentmcp("inspect", "--nope")
		if code := exitStatus(t, cmd.Run()); code != exitUsage {
			t.Errorf("exit status %d, want %d", code, exitUsage)
		}
		if want := "agentmcp: inspect: flag provided but not defined: -nope (run 'agentmcp inspect -h' for usage)\n"; stderr.String() != want {
			t.Errorf("stderr = %q, want %q", stderr, want)
		}
	})

	t.Run("isError", func(t *testing.T) {
		t.Parallel()
		_, hs := serve(t, mcptest.Stateless)
		cmd, stdout, _ := agentmcp("call", hs.URL, "fail")
		if code := exitStatus(t, cmd.Run()); code != exitFailure {
			t.Errorf("exit status %d, want %d", code, exitFailure)
		}
		if !strings.Contains(stdout.String(), `"isError": true`) {
			t.Errorf("stdout = %q, want the result", stdout)
		}
	})

	t.Run("sigint", func(t *testing.T) {
		t.Parallel()
		srv, hs := serve(t, mcptest.Stateless)
		t.Cleanup(srv.ReleaseSlow)
		cmd, stdout, stderr := agentmcp("call", hs.URL, "slow")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, srv.SlowStarted, "the slow call to start")
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		if code := exitStatus(t, cmd.Wait()); code != exitInterrupted {
			t.Errorf("exit status %d, want %d", code, exitInterrupted)
		}
		if stderr.String() != "agentmcp: interrupted\n" || stdout.Len() != 0 {
			t.Errorf("stdout %q, stderr %q; want nothing and the interruption", stdout, stderr)
		}
		waitFor(t, srv.SlowCancelled, "the server to see the call cancelled")
	})
}
