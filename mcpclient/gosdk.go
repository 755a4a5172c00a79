package mcpclient

import (
	"context"
	"net/url"

	"github.com/agentmcp/agentmcp/mcpclient/transport"
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
// wrapping it as sessionTransport does: go-sdk finds out through an
// internal interface of its connection that the session is initialized
// (and opens the legacy GET stream then), which a wrapper would hide.
type bareTransport struct {
	mcp.Transport
	s *session
}

func (t bareTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err == nil {
		t.s.conn, t.s.raw = conn, conn
	}
	return conn, err
}

// sdkStreamableTransport returns go-sdk's streamable HTTP transport for the
// server, on the Manager's guarded HTTP client, with the server's headers
// and credentials added to every request.
func (c *server) sdkStreamableTransport() mcp.Transport {
	hc := *c.m.httpClient
	endpoint, _ := url.Parse(c.opts.URL) // checked at registration
	hc.Transport = &transport.SDKRoundTripper{
		Next:      c.m.httpClient.Transport,
		Endpoint:  endpoint,
		Header:    c.opts.Transport.Headers,
		Authorize: c.authorizeRequest(),
	}
	maxEvent := c.m.opts.MaxMessageSize
	if maxEvent == 0 {
		maxEvent = -1 // no cap
	}
	return &mcp.StreamableClientTransport{
		Endpoint:     c.opts.URL,
		HTTPClient:   &hc,
		MaxEventSize: maxEvent,
		MaxRetries:   transport.MaxStreamRetries,
	}
}
