package mcpclient

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TransportImplementation selects whose code runs the streamable HTTP
// transport of a server.
type TransportImplementation string

const (
	// ImplementationAgentMCP is agentmcp's own streamable HTTP transport
	// (the zero value means it): typed HTTP errors, session resumption,
	// size caps per message, bounded Close, and less work per message than
	// go-sdk's (docs/PERFORMANCE.md).
	ImplementationAgentMCP TransportImplementation = "agentmcp"
	// ImplementationGoSDK is go-sdk's mcp.StreamableClientTransport, for
	// comparison or as a fallback. Custom headers and credentials still go
	// on every request, and a 401, 403 or (on the handshake) 404 or 405
	// still classify as with the default (TransportAuto falls back to SSE
	// on 404 and 405 only), but saved sessions are not
	// resumed (ServerOptions.Resume is ignored and ServerInfo.Resume is
	// nil), a message over Options.MaxMessageSize fails the connection
	// rather than the one call, progress notifications go through go-sdk's
	// notification queue (which may deliver them after their call returned,
	// when its callback is gone), and a resource read completed through
	// input requests may be served from go-sdk's cache.
	ImplementationGoSDK TransportImplementation = "go-sdk"
)

// bareTransport records go-sdk's connection on the session without
// wrapping it as progressTransport does: go-sdk finds out through an
// internal interface of its connection that the session is initialized
// (and opens the legacy GET stream then), which a wrapper would hide.
type bareTransport struct {
	mcp.Transport
	s *session
}

func (t bareTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err == nil {
		t.s.conn = conn
	}
	return conn, err
}

// sdkStreamableTransport returns go-sdk's streamable HTTP transport for the
// server, on the Manager's guarded HTTP client, with the server's headers
// and credentials added to every request.
func (c *conn) sdkStreamableTransport() mcp.Transport {
	hc := *c.m.httpClient
	endpoint, _ := url.Parse(c.opts.URL) // checked at registration
	hc.Transport = &sdkRoundTripper{
		next:      c.m.httpClient.Transport,
		endpoint:  endpoint,
		header:    c.opts.Transport.Headers,
		authorize: c.authorizeRequest(),
	}
	maxEvent := c.m.opts.MaxMessageSize
	if maxEvent == 0 {
		maxEvent = -1 // no cap
	}
	return &mcp.StreamableClientTransport{
		Endpoint:     c.opts.URL,
		HTTPClient:   &hc,
		MaxEventSize: maxEvent,
		MaxRetries:   defaultStreamTiming.maxRetries,
	}
}

// sdkRoundTripper adds what agentmcp's own transport adds to each request
// of go-sdk's transport, and turns the statuses the Manager acts on into an
// [*HTTPError] (which go-sdk wraps), so that errors.Is(err, ErrUnauthorized)
// and IsTransportNotImplemented hold as with the default transport.
type sdkRoundTripper struct {
	next      http.RoundTripper // nil means http.DefaultTransport
	endpoint  *url.URL          // the server's: credentials go to its origin only
	header    http.Header
	authorize func(*http.Request) error
}

func (t *sdkRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if (len(t.header) > 0 || t.authorize != nil) && (t.endpoint == nil || sameOrigin(req.URL, t.endpoint)) {
		req = req.Clone(req.Context()) // a RoundTripper must not modify its request
		for k, vs := range t.header {
			req.Header[k] = vs
		}
		if t.authorize != nil {
			if err := t.authorize(req); err != nil {
				return nil, err
			}
		}
	}
	next := t.next
	if next == nil {
		next = http.DefaultTransport
	}
	resp, err := next.RoundTrip(req)
	if err != nil || req.Method != http.MethodPost {
		// go-sdk handles the GET stream's statuses (405: no stream) itself.
		return resp, err
	}
	switch resp.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
	case http.StatusNotFound, http.StatusMethodNotAllowed:
		if req.Header.Get(headerSessionID) != "" {
			return resp, nil // a lost session: go-sdk reports mcp.ErrSessionMissing
		}
	default:
		return resp, nil
	}
	herr := newHTTPError(req, resp)
	resp.Body.Close()
	switch {
	case herr.Is(ErrUnauthorized) || herr.Is(ErrTransportNotImplemented):
		return nil, herr
	case herr.JSONRPC != nil:
		return nil, rejected(fmt.Errorf("%w: %w", herr.JSONRPC, herr))
	}
	return nil, rejected(herr)
}
