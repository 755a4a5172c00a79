package mcpclient_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/internal/testing/fixture"
	"github.com/agentmcp/agentmcp/mcpclient"
)

// readPid reads the pid a test server wrote.
func readPid(t *testing.T, file string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// TestStdioRestartsAfterKill: a stdio server whose process is killed is
// started again, and is ready again by itself.
func TestStdioRestartsAfterKill(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	m := newManager(t, nil)
	rec := record(m)
	connectReady(t, m, "s", mcpclient.ServerOptions{
		Command: &mcpclient.CommandOptions{Path: os.Args[0], Env: []string{"AGENTMCP_TEST_STDIO_SERVER=serve", "AGENTMCP_TEST_PID_FILE=" + pidFile}},
		Retry:   &mcpclient.RetryOptions{BaseDelay: 10 * time.Millisecond, MaxDelay: 100 * time.Millisecond},
	})
	first := readPid(t, pidFile)
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	rec.waitFor(t, "the drop", stateIs("s", mcpclient.StateConnecting))
	rec.waitFor(t, "ready again", stateIs("s", mcpclient.StateReady))
	second := readPid(t, pidFile)
	if second == first {
		t.Fatalf("no new process (pid %d)", second)
	}
	if _, err := m.CallTool(testCtx(t), "s", "echo", map[string]any{"text": "again"}, nil); err != nil {
		t.Fatalf("call after the restart: %v", err)
	}
	fixture.WaitGone(t, first, "the killed server") // reaped, not a zombie of ours
}

// recordingClock is a Clock whose waits end at once; it records how long
// each was meant to be.
type recordingClock struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (c *recordingClock) Now() time.Time { return time.Now() }

func (c *recordingClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	c.waits = append(c.waits, d)
	c.mu.Unlock()
	ch := make(chan time.Time, 1)
	ch <- time.Now()
	return ch
}

func (c *recordingClock) recorded() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.waits)
}

// TestStdioCrashLoopBacksOff: a server that exits at once on every start
// is started again and again, never given up on, each start after a
// doubling wait (bounded restart rate), and its error carries what it said
// on stderr.
func TestStdioCrashLoopBacksOff(t *testing.T) {
	clock := &recordingClock{}
	m := newManager(t, &mcpclient.Options{Clock: clock})
	rec := record(m)
	ctx := testCtx(t)
	const base = 100 * time.Millisecond
	m.RegisterServer(ctx, "s", mcpclient.ServerOptions{
		Command: &mcpclient.CommandOptions{Path: os.Args[0], Env: []string{"AGENTMCP_TEST_STDIO_SERVER=crash"}},
		Retry:   &mcpclient.RetryOptions{MaxAttempts: 2, BaseDelay: base, MaxDelay: time.Second, BackgroundMaxDelay: 4 * time.Second},
	})
	m.EstablishConnection("s")
	// Past the foreground attempts and into the background retry.
	var ev mcpclient.Event
	for range 6 {
		ev = rec.waitFor(t, "a failed start", stateIs("s", mcpclient.StateFailed))
	}
	if ev.Err == nil || !strings.Contains(ev.Err.Error(), "crash: cannot open the database") {
		t.Errorf("error %v; want the server's stderr in it", ev.Err)
	}
	m.RemoveServer(ctx, "s")
	// Each start after the first waited, and the waits of the pacing
	// double up to the cap: 200ms, 400ms, 800ms, ...
	waits := clock.recorded()
	for _, want := range []time.Duration{2 * base, 4 * base, 8 * base} {
		if !slices.Contains(waits, want) {
			t.Errorf("no wait of %v before a restart; waits %v", want, waits)
		}
	}
	for _, d := range waits {
		if d > 4*time.Second {
			t.Errorf("a wait of %v, over BackgroundMaxDelay", d)
		}
	}
}

// TestStdioStopsProcessGroup: closing a stdio server stops what it
// started too (its process group).
func TestStdioStopsProcessGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile, childFile := filepath.Join(dir, "pid"), filepath.Join(dir, "child")
	m := newManager(t, nil)
	connectReady(t, m, "s", mcpclient.ServerOptions{Command: &mcpclient.CommandOptions{Path: os.Args[0],
		Env: []string{"AGENTMCP_TEST_STDIO_SERVER=spawn-child", "AGENTMCP_TEST_PID_FILE=" + pidFile, "AGENTMCP_TEST_CHILD_PID_FILE=" + childFile}}})
	server, child := readPid(t, pidFile), readPid(t, childFile)
	if pgid, _ := syscall.Getpgid(server); pgid == syscall.Getpgrp() {
		t.Errorf("server %d is in the test's process group %d; want one of its own", server, pgid)
	}
	if err := m.RemoveServer(testCtx(t), "s"); err != nil {
		t.Fatal(err)
	}
	fixture.WaitGone(t, server, "the server")
	fixture.WaitGone(t, child, "the server's child")
}

// TestStdioDiesWithParent: a stdio server and what it started do not
// outlive the process that started them, even one killed with SIGKILL,
// nor does a child of the server that left its process group (Linux: the
// supervisor's parent-death signal, from the Starter's thread, and the
// supervisor kills all it adopted).
func TestStdioDiesWithParent(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the parent-death signal is Linux's")
	}
	dir := t.TempDir()
	pidFile, childFile := filepath.Join(dir, "pid"), filepath.Join(dir, "child")
	parent := exec.Command(os.Args[0], "-test.run=^$")
	parent.Env = append(os.Environ(), "AGENTMCP_TEST_STDIO_PARENT=1", "AGENTMCP_TEST_PID_FILE="+pidFile, "AGENTMCP_TEST_CHILD_PID_FILE="+childFile)
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	parent.Stderr = os.Stderr
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { parent.Process.Kill(); parent.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "ready\n" {
		t.Fatalf("parent said %q, %v", line, err)
	}
	server, child := readPid(t, pidFile), readPid(t, childFile)
	t.Cleanup(func() {
		syscall.Kill(server, syscall.SIGKILL) // stop anything left
		syscall.Kill(child, syscall.SIGKILL)
	})
	if err := parent.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	parent.Wait()
	fixture.WaitGone(t, server, "the server of a killed parent")
	fixture.WaitGone(t, child, "the server's child, out of its group, of a killed parent")
}

// parentOf returns the parent pid of pid, from /proc.
func parentOf(t *testing.T, pid int) int {
	t.Helper()
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		t.Fatal(err)
	}
	return ppid
}

// TestStdioSupervisorKilled: a server started by a wrapper (sh -c, as npx
// and uvx start node and python) whose supervisor is killed with SIGKILL
// does not run on unsupervised: the Manager notices at once, the real
// server (the wrapper's child, re-parented away from the dead supervisor)
// is killed, and the server is started anew and answers.
func TestStdioSupervisorKilled(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the supervisor is Linux's")
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	m := newManager(t, nil)
	rec := record(m)
	connectReady(t, m, "s", mcpclient.ServerOptions{
		// sh runs the server as its child (no exec: a command follows).
		Command: &mcpclient.CommandOptions{Path: "/bin/sh", Args: []string{"-c", `"$0"; exit $?`, os.Args[0]},
			Env: []string{"AGENTMCP_TEST_STDIO_SERVER=serve", "AGENTMCP_TEST_PID_FILE=" + pidFile}},
		Retry: &mcpclient.RetryOptions{BaseDelay: 10 * time.Millisecond, MaxDelay: 100 * time.Millisecond},
	})
	server := readPid(t, pidFile)
	t.Cleanup(func() { syscall.Kill(server, syscall.SIGKILL) })
	wrapper := parentOf(t, server)
	supervisor := parentOf(t, wrapper)
	if cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(supervisor) + "/cmdline"); !strings.HasPrefix(string(cmdline), "agentmcp-stdio-supervisor\x00") {
		t.Fatalf("the wrapper's parent %d is %q, not the supervisor", supervisor, cmdline)
	}
	if err := syscall.Kill(supervisor, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	fixture.WaitGone(t, server, "the real server of a killed supervisor")
	rec.waitFor(t, "the drop", stateIs("s", mcpclient.StateConnecting))
	rec.waitFor(t, "ready again", stateIs("s", mcpclient.StateReady))
	second := readPid(t, pidFile)
	if second == server {
		t.Fatalf("no new process (pid %d)", second)
	}
	if _, err := m.CallTool(testCtx(t), "s", "echo", map[string]any{"text": "again"}, nil); err != nil {
		t.Fatalf("call after the restart: %v", err)
	}
}
