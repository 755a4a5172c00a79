//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// isTerminal reports whether f is a terminal: a file whose termios can be
// read (a pipe, a file and /dev/null are not). It leaves f in its mode
// (f.Fd would make it blocking).
func isTerminal(f *os.File) bool {
	if f == nil {
		return false
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	var terr error
	if err := rc.Control(func(fd uintptr) {
		_, terr = unix.IoctlGetTermios(int(fd), ioctlGetTermios)
	}); err != nil {
		return false
	}
	return terr == nil
}
