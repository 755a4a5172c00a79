//go:build !unix

package h1

import "net"

// readableWait returns nil: off unix, an idle stream keeps its buffer.
func readableWait(net.Conn) func() error { return nil }

// closedByPeer returns false: off unix, a reused connection closed by its
// server is met by the request's one retry.
func closedByPeer(net.Conn) bool { return false }
