package mcpclient

import (
	"errors"
	"fmt"
	"net/http"
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
