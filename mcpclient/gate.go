package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"

	"github.com/agentmcp/agentmcp/netguard"
)

// ErrGateClosed is wrapped by the error of a request that Options.Gate
// stopped before it was sent.
var ErrGateClosed = errors.New("mcpclient: outbound requests are stopped")

// gated is the RoundTripper of a Manager with Options.Gate: every request
// asks the gate first, and is not sent when it says no.
type gated struct {
	next http.RoundTripper
	gate func() error
}

func (g gated) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := g.gate(); err != nil {
		if req.Body != nil {
			req.Body.Close() // a RoundTripper must close the body, even on error
		}
		return nil, fmt.Errorf("%w: %w", ErrGateClosed, err)
	}
	return g.next.RoundTrip(req)
}

// CloseIdleConnections forwards to the next RoundTripper, so that
// Manager.Close still closes idle connections.
func (g gated) CloseIdleConnections() {
	if c, ok := g.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// gateClient returns a copy of base whose requests ask gate first and,
// when its transport is an *http.Transport (nil is http.DefaultTransport),
// whose connections (dialed by guard) ask it again before each write.
func gateClient(base *http.Client, guard *netguard.Guard, gate func() error) *http.Client {
	next := base.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	if t, ok := next.(*http.Transport); ok {
		t = guard.Transport(t)
		t.DialContext = gatedDial(t.DialContext, gate)
		next = t
	}
	c := *base
	c.Transport = gated{next: next, gate: gate}
	return &c
}

// gatedDial wraps dial so that every connection it opens asks the gate
// again before each write. The RoundTripper's check comes before the
// connection is taken or dialed, and a process stopped right after it (a
// SIGSTOP, a VM frozen, a long pause) would write the request once it runs
// again, past its trust window; at the write, the gap left is that of one
// system call.
func gatedDial(dial func(ctx context.Context, network, address string) (net.Conn, error), gate func() error) func(ctx context.Context, network, address string) (net.Conn, error) {
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
		return 0, fmt.Errorf("%w: %w", ErrGateClosed, err)
	}
	return c.Conn.Write(p)
}
