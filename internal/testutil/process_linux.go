package testutil

import (
	"errors"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// WaitGone waits until process pid has ended (it need not be a child of
// the test's): a pidfd becomes readable when the process exits. The
// 30-second timeout is a safety net only: a process still there then is
// killed and the test fails.
func WaitGone(t testing.TB, pid int, what string) {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return
	}
	if err != nil {
		t.Fatalf("pidfd_open(%d): %v", pid, err)
	}
	defer unix.Close(fd)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, 30_000)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n == 0 {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("%s (pid %d) still runs (poll: %d, %v)", what, pid, n, err)
		}
		return
	}
}
