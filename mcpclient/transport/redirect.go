package transport

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/agentmcp/agentmcp/mcpclient/transport/internal/h1"
)

// Redirects and a server's secrets.
//
// net/http copies a request's headers onto every redirect hop, and drops
// only Authorization, Cookie and WWW-Authenticate, only when the host
// changes. A server's custom headers (API keys, most often) and a bearer
// token on a redirect to another port of the same host would both follow a
// redirect to another origin. So on a hop to an origin other than the
// request's own, an HTTP client whose CheckRedirect is StripCrossOrigin's
// keeps only the protocol's headers that carry no secret (see
// crossOriginHeader), and SDKRoundTripper adds credentials only on the
// server's own origin.

// StripCrossOrigin wraps a CheckRedirect function (next must not be nil)
// so that a redirect to another origin carries no header but the
// protocol's own that carry no secret (content negotiation, the MCP
// headers that describe the request, the session id). Use it in the
// HTTPClient given to [Streamable] or [SSE] when the server's custom
// headers or credentials must not follow a redirect elsewhere.
func StripCrossOrigin(next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if err := next(req, via); err != nil {
			return err
		}
		if !sameOrigin(req.URL, via[0].URL) {
			for k := range req.Header {
				if !crossOriginHeader(k) {
					delete(req.Header, k)
				}
			}
		}
		return nil
	}
}

// crossOriginHeader reports whether the canonical header name k may go to
// another origin: content negotiation and the MCP headers that describe
// the request itself (as its body does), not credentials. The session id
// goes too: when a server's requests are redirected, it was the other
// origin that issued it (and a session id is no credential: the spec
// forbids authenticating with it).
func crossOriginHeader(k string) bool {
	switch k {
	case "Accept", "Content-Type", "User-Agent", headerProtocolVersion, headerSessionID, headerMethod, headerName, headerLastEventID:
		return true
	}
	return strings.HasPrefix(k, headerParamPrefix)
}

// sameOrigin reports whether a and b have the same scheme, host and port.
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(h1.HostPort(a), h1.HostPort(b))
}
