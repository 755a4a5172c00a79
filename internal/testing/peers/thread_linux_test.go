package peers

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"
)

// TestStartedFromEndingThread: a server started by a goroutine locked to
// its OS thread (as mcpclient/stdio's Starter locks one) outlives that
// thread, which Go ends when the goroutine returns: the kernel sends a
// child's parent-death signal when the thread that forked it ends, not
// its process.
func TestStartedFromEndingThread(t *testing.T) {
	t.Parallel()
	cmd := nodeCommand(t, everythingMain, "streamableHttp")
	d := newDaemon(t, "everything-thread")
	s := &Server{cmd: cmd, d: d}
	var err error
	tid := onEndingThread(func() {
		var evs []listenEvent
		if evs, err = d.start(s.launch(0)); err == nil {
			s.Port = evs[0].Port
			s.URL = "http://127.0.0.1:" + strconv.Itoa(s.Port) + "/mcp"
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	waitThreadEnd(t, tid)
	// Any parent-death signal has been sent by now.
	tr := &mcp.StreamableClientTransport{Endpoint: s.URL, HTTPClient: newHTTPClient(t), MaxRetries: -1}
	requireTools(t, listTools(t, tr), "echo")
}

// onEndingThread runs f on a goroutine locked to an OS thread, which Go
// ends when the goroutine returns, and returns the thread's id once f has
// returned. The thread is not the main one, which Go never ends.
func onEndingThread(f func()) (tid int) {
	tids := make(chan int)
	var run func()
	run = func() {
		runtime.LockOSThread() // never unlocked, but on the main thread
		if syscall.Gettid() == syscall.Getpid() {
			// Hold the main thread while another goroutine, on another
			// thread then, runs f.
			done := make(chan struct{})
			go func() { defer close(done); run() }()
			<-done
			runtime.UnlockOSThread()
			return
		}
		f()
		tids <- syscall.Gettid()
	}
	go run()
	return <-tids
}

// waitThreadEnd waits until the thread tid of this process has ended
// (its pidfd, PIDFD_THREAD, becomes readable). It skips the test on
// kernels before 6.9, which have no PIDFD_THREAD.
func waitThreadEnd(t *testing.T, tid int) {
	t.Helper()
	const pidfdThread = unix.O_EXCL // PIDFD_THREAD, linux/pidfd.h
	fd, err := unix.PidfdOpen(tid, pidfdThread)
	if errors.Is(err, unix.EINVAL) {
		t.Skipf("pidfd_open(PIDFD_THREAD): %v (Linux 6.9 or later)", err)
	}
	if errors.Is(err, unix.ESRCH) {
		return // already gone
	}
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	for {
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, int(callTimeout/time.Millisecond))
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			t.Fatal(err)
		case n == 0: // a safety net only
			t.Fatalf("thread %d did not end within %v", tid, callTimeout)
		}
		return
	}
}

// TestEndedLogged: a server that ends while the test runs (killed from
// outside here) says so in the test log, with how it ended: one killed by
// a signal logs nothing itself.
func TestEndedLogged(t *testing.T) {
	t.Parallel()
	rec := &recorder{TB: t}
	s := &Server{cmd: nodeCommand(t, everythingMain, "streamableHttp"), d: newDaemon(rec, "everything-ended")}
	if _, err := s.d.start(s.launch(0)); err != nil {
		t.Fatal(err)
	}
	p := s.d.proc
	pid := p.cmd.Process.Pid
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for range p.events { // closed once the end is logged
	}
	s.Stop()
	want := fmt.Sprintf("everything-ended: peers: pid %d ended before the test stopped it: signal killed", pid)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if !slices.Contains(rec.logs, want) {
		t.Errorf("logs %q lack %q", rec.logs, want)
	}
}
