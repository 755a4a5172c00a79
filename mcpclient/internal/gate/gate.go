// Package gate stops the outbound requests of package mcpclient's Manager
// while a function the application gives (mcpclient.Options.Gate) says
// so: every HTTP request asks it before it is sent, and every connection
// asks it again before each write.
//
// # Usage
//
// [Client] wraps the Manager's HTTP client; [Dial] wraps the dialer of the
// connections it opens itself (the standing streams).
//
// # Concurrency
//
// The gate function is called from any goroutine, once per request and
// once per write; it must be safe for concurrent use and quick.
//
// # Errors
//
// A request or write the gate stops fails with an error that wraps
// [ErrClosed] and the gate's error.
package gate

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"

	"github.com/agentmcp/agentmcp/netguard"
)

// ErrClosed is wrapped by the error of a request that the gate stopped
// before it was sent.
var ErrClosed = errors.New("mcpclient: outbound requests are stopped")

// DialFunc dials a connection, as net.Dialer.DialContext does.
type DialFunc func(ctx context.Context, network, address string) (net.Conn, error)

// gated is the RoundTripper of a gated client: every request asks the
// gate first, and is not sent when it says no.
type gated struct {
	next http.RoundTripper
	gate func() error
}

func (g gated) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := g.gate(); err != nil {
		if req.Body != nil {
			req.Body.Close() // a RoundTripper must close the body, even on error
		}
		return nil, fmt.Errorf("%w: %w", ErrClosed, err)
	}
	return g.next.RoundTrip(req)
}

// CloseIdleConnections forwards to the next RoundTripper, so that closing
// the client's idle connections still closes them.
func (g gated) CloseIdleConnections() {
	if c, ok := g.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// Client returns a copy of base whose requests ask gate first and, when
// its transport is an *http.Transport (nil is http.DefaultTransport),
// whose connections (dialed by guard) ask it again before each write.
func Client(base *http.Client, guard *netguard.Guard, gate func() error) *http.Client {
	next := base.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	if t, ok := next.(*http.Transport); ok {
		t = guard.Transport(t)
		t.DialContext = Dial(t.DialContext, gate)
		next = t
	}
	c := *base
	c.Transport = gated{next: next, gate: gate}
	return &c
}

// Dial wraps dial so that every connection it opens asks the gate again
// before each write. A client's check comes before the connection is taken
// or dialed, and a process stopped right after it (a SIGSTOP, a VM
// frozen, a long pause) would write the request once it runs again, past
// its trust window; at the write, the gap left is that of one system call.
func Dial(dial DialFunc, gate func() error) DialFunc {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		c, err := dial(ctx, network, address)
		if err != nil {
			return nil, err
		}
		return gatedConn{Conn: c, gate: gate}, nil
	}
}

type gatedConn struct {
	net.Conn
	gate func() error
}

func (c gatedConn) Write(p []byte) (int, error) {
	if err := c.gate(); err != nil {
		return 0, fmt.Errorf("%w: %w", ErrClosed, err)
	}
	return c.Conn.Write(p)
}

// NetConn returns the connection under the gate (its socket, for the
// transport's looks at an idle connection).
func (c gatedConn) NetConn() net.Conn { return c.Conn }
