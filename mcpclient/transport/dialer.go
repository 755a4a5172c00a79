package transport

import "github.com/agentmcp/agentmcp/mcpclient/transport/internal/h1"

// Dialer opens the connections a streamable connection sends its requests
// on and keeps its standing stream on, rather than net/http's Transport
// behind the HTTPClient; an [SSE] connection uses it for its event stream
// and its POSTs. Requests go on HTTP/1.1 connections of the Dialer's own,
// kept idle between requests and written and read on the caller's
// goroutine; each standing stream gets a connection of its own (an idle
// one of the requests' taken over, else one dialled for it), which holds
// no buffer while it is idle. A connection's handshake has one more
// connection dialled beside it, for the stream and the requests that
// follow its answer at once.
//
// Its fields, all set before first use:
//
//   - DialContext dials the TCP connection ("tcp", "host:port"). It is
//     required. Give it the dialer of the HTTPClient's transport (an SSRF
//     guard's, netguard.Guard.DialContext), so that the connections are
//     checked as the HTTPClient's are.
//   - TLSClientConfig configures https connections, as
//     http.Transport.TLSClientConfig does; nil means the defaults. Its
//     NextProtos is ignored: the Dialer's connections speak HTTP/1.1.
//   - Proxy, if set, is asked about a connection's first request or
//     stream, as http.Transport.Proxy is: if it names a proxy, the
//     connection's requests and streams go through the HTTPClient.
//   - Gate, if set, is asked before each request or stream goes on a
//     connection of the Dialer's (a replica's lease check, say): an error
//     fails that request with it, unsent.
//
// CloseIdleConnections closes its idle connections, as
// http.Transport.CloseIdleConnections does. A request or a stream goes
// through the HTTPClient instead, for the rest of its connection, when
// the URL is neither http nor https or has userinfo, when Proxy names a
// proxy, when the server answers over HTTP/2 or with a redirect; over
// https, a connection's first request goes through the HTTPClient to
// learn whether the server speaks HTTP/2.
//
// The Dialer is a small HTTP/1.1 client of the transports' own (package
// mcpclient/transport/internal/h1), whose doc lists what of net/http it
// keeps and the tests that prove it. A Dialer is safe for concurrent use
// and may be shared by many connections, as an http.Transport is.
type Dialer = h1.Dialer
