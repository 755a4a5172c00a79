//go:build unix

package h1

import (
	"errors"
	"net"
	"syscall"
)

// readableWait returns a function that blocks until conn has bytes to read
// (or is closed), without reading them, or nil when conn's socket cannot
// be reached (a TLS connection, say, whose own buffers may hold a record).
func readableWait(conn net.Conn) func() error {
	raw := rawConnOf(netConnOf(conn))
	if raw == nil {
		return nil
	}
	return func() error {
		// false: nothing yet, the poller waits for the socket.
		return raw.Read(func(fd uintptr) bool { return readable(fd, 0) })
	}
}

// closedByPeer reports whether conn, an idle connection, was closed by its
// server (or has bytes to read, which an idle HTTP/1.1 connection must
// not): a look at its socket that does not wait. A connection whose socket
// cannot be reached is taken to be open.
func closedByPeer(conn net.Conn) bool {
	raw := rawConnOf(conn)
	if raw == nil {
		return false
	}
	closed := false
	err := raw.Read(func(fd uintptr) bool {
		closed = readable(fd, syscall.MSG_DONTWAIT)
		return true
	})
	return closed || err != nil
}

// rawConnOf returns conn's socket, or nil.
func rawConnOf(conn net.Conn) syscall.RawConn {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return nil
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return raw
}

// readable peeks at socket fd (with the extra flags): true when a read
// would not block (bytes, the end, or an error the read will see).
func readable(fd uintptr, flags int) bool {
	var one [1]byte
	for {
		_, _, err := syscall.Recvfrom(int(fd), one[:], syscall.MSG_PEEK|flags)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EAGAIN):
			return false
		}
		return true
	}
}
