//go:build !unix

package transport

import "net"

// readableWait returns nil: off unix, an idle stream keeps its buffer.
func readableWait(net.Conn) func() error { return nil }
