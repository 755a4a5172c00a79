//go:build unix

package transport

import (
	"errors"
	"net"
	"syscall"
)

// readableWait returns a function that blocks until conn has bytes to read
// (or is closed), without reading them, or nil when conn's socket cannot
// be reached (a TLS connection, say, whose own buffers may hold a record).
func readableWait(conn net.Conn) func() error {
	sc, ok := netConnOf(conn).(syscall.Conn)
	if !ok {
		return nil
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return func() error {
		var one [1]byte
		return raw.Read(func(fd uintptr) bool {
			for {
				_, _, err := syscall.Recvfrom(int(fd), one[:], syscall.MSG_PEEK)
				switch {
				case errors.Is(err, syscall.EINTR):
					continue
				case errors.Is(err, syscall.EAGAIN):
					return false // wait for the poller
				}
				return true // bytes, the end, or an error the read will see
			}
		})
	}
}

// closedByPeer reports whether conn, an idle connection, was closed by its
// server (or has bytes to read, which an idle HTTP/1.1 connection must
// not): a look at its socket that does not wait. A connection whose socket
// cannot be reached is taken to be open.
func closedByPeer(conn net.Conn) bool {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	closed := false
	var one [1]byte
	err = raw.Read(func(fd uintptr) bool {
		for {
			_, _, err := syscall.Recvfrom(int(fd), one[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
			switch {
			case errors.Is(err, syscall.EINTR):
				continue
			case errors.Is(err, syscall.EAGAIN):
			default:
				closed = true // bytes, the end, or an error
			}
			return true
		}
	})
	return closed || err != nil
}
