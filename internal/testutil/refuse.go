//go:build unix

package testutil

import (
	"fmt"
	"testing"

	"golang.org/x/sys/unix"
)

// RefusingAddr returns a 127.0.0.1 address that refuses connections for
// the whole test: a TCP socket bound to it and never listening holds the
// port, so no other listener can take it (as one could a closed port).
func RefusingAddr(t testing.TB) string {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("127.0.0.1:%d", sa.(*unix.SockaddrInet4).Port)
}
