package netguard

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
)

// maxRedirects is how many redirects a guarded client follows, as
// net/http's default policy.
const maxRedirects = 10

// HTTPClient returns a copy of base (nil means a zero http.Client) whose
// requests are all guarded:
//
//   - every request, the first and each redirect hop, has its URL checked
//     with CheckURL before it is sent;
//   - CheckRedirect refuses a hop that fails CheckURL, and stops after 10
//     redirects, before calling base's own CheckRedirect, if any;
//   - connections are dialled through DialContext, which checks the
//     resolved address of every new connection.
//
// If base.Transport is nil or an *http.Transport, the transport is a clone
// prepared by Transport. Any other RoundTripper cannot be made to dial
// through the guard; it is wrapped by RoundTripper and so gets the lexical
// checks only. base itself is not modified. Each call builds a new
// transport with its own connection pool, so make one client and share it.
func (g *Guard) HTTPClient(base *http.Client) *http.Client {
	c := new(http.Client)
	if base != nil {
		*c = *base
	}
	switch t := c.Transport.(type) {
	case nil:
		c.Transport = g.RoundTripper(g.Transport(nil))
	case *http.Transport:
		c.Transport = g.RoundTripper(g.Transport(t))
	default:
		c.Transport = g.RoundTripper(t)
	}
	next := c.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= maxRedirects {
			return fmt.Errorf("netguard: stopped after %d redirects", maxRedirects)
		}
		if err := g.CheckURL(req.URL.String()); err != nil {
			return err
		}
		if next != nil {
			return next(req, via)
		}
		return nil
	}
	return c
}

// Transport returns a clone of base (nil means http.DefaultTransport) that
// dials through DialContext. The clone uses no proxy, because a proxy would
// resolve and connect on its own, out of the guard's sight, and no custom
// DialTLSContext, because that would bypass DialContext; TLS settings in
// TLSClientConfig still apply. base itself is not modified.
func (g *Guard) Transport(base *http.Transport) *http.Transport {
	if base == nil {
		base = http.DefaultTransport.(*http.Transport)
	}
	t := base.Clone()
	t.Proxy = nil
	t.DialContext = g.DialContext
	t.DialTLSContext = nil
	// The deprecated DialTLS would still be used for https when
	// DialTLSContext is nil; DialContext already takes priority over Dial.
	//lint:ignore SA1019 clearing the deprecated field is what keeps a base's DialTLS from dialling around the guard
	t.DialTLS = nil
	return t
}

// RoundTripper returns a RoundTripper that checks every request's URL with
// CheckURL before passing it to next, for callers who bring their own
// transport. If next is nil, Transport(nil) is used. The check is lexical
// only: unless next dials through DialContext, a name that resolves to a
// refused address gets through.
func (g *Guard) RoundTripper(next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = g.Transport(nil)
	}
	return &roundTripper{g: g, next: next}
}

type roundTripper struct {
	g    *Guard
	next http.RoundTripper

	// passed remembers URLs that passed CheckURL, so that the requests of
	// a connection (all to one URL) are not parsed again each time: the
	// check is lexical and a Guard never changes, so a URL's verdict
	// stands. It holds at most maxPassedURLs entries.
	passed  sync.Map // string -> struct{}
	npassed atomic.Int64
}

// maxPassedURLs bounds roundTripper.passed; past it, it starts over.
const maxPassedURLs = 4096

func (rt *roundTripper) check(raw string) error {
	if _, ok := rt.passed.Load(raw); ok {
		return nil
	}
	if err := rt.g.CheckURL(raw); err != nil {
		return err
	}
	if rt.npassed.Add(1) > maxPassedURLs {
		rt.passed.Clear()
		rt.npassed.Store(1)
	}
	rt.passed.Store(raw, struct{}{})
	return nil
}

func (rt *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := rt.check(req.URL.String()); err != nil {
		// A RoundTripper must close the body, even on errors.
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	return rt.next.RoundTrip(req)
}

// CloseIdleConnections closes the idle connections of the wrapped
// transport, so that http.Client.CloseIdleConnections reaches it.
func (rt *roundTripper) CloseIdleConnections() {
	if c, ok := rt.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
