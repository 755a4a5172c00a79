// Package h1 is a small HTTP/1.1 client of the transports' own: the
// [Dialer] and its pools, a request writer and a response reader, and the
// standing streams' connections. It stands in for net/http's Transport
// under package transport's streamable HTTP and HTTP+SSE connections
// (transport.Dialer is this Dialer), and nowhere else.
//
// # Why it exists
//
// net/http's Transport hands each request to a write loop goroutine and
// its response back from a read loop goroutine; for a sequential caller
// those hand-offs cost more CPU than the rest of the request, and an idle
// pooled connection holds both goroutines and two buffers. Here a request
// is written and its answer read on the caller's goroutine, and an idle
// connection holds its socket alone. docs/PERFORMANCE.md sections 10 and
// 12 give the measurements. It is a bypass of net/http, not of go-sdk:
// nothing upstream would remove it; it goes when net/http's Transport
// stops costing those goroutines.
//
// # What it keeps of net/http
//
// Each of these is a behaviour of net/http's Transport this package must
// match; requests_test.go and dialer_test.go (and transport's
// standing_test.go, through the public API) prove them:
//
//   - validated header names and values, Host, User-Agent, Content-Length,
//     Accept-Encoding: gzip with a gzip answer decompressed
//     (TestOwnRequests, TestOwnRequestsInvalidHeader);
//   - the response head's limits (MaxResponseHeaderBytes, five 1xx
//     answers at most) (TestStandingStreamHostileHead);
//   - a connection reused only after an answer read to its end and
//     nothing after it, never once its server closed it or after 90 s
//     idle, and shared by the Dialer's connections to a host
//     (TestOwnRequestsNotReused, TestOwnRequestsIdle,
//     TestOwnRequestsShared);
//   - one retry, on a new connection, of a request that met a reused
//     connection the server had closed before any byte of its answer
//     (TestOwnRequestsRetry);
//   - no request sent whose context ended; a context's end closes the
//     connection under its request (TestOwnRequestsCancel,
//     TestOwnRequestsContextEnded);
//   - redirects, proxies and HTTP/2 handed to the connection's
//     http.Client, which handles them as it always does
//     (TestOwnRequestsRedirect, transport's TestStandingStreamFallsBack);
//     so are URLs with userinfo and schemes other than http and https.
//
// Beyond net/http: a standing stream takes over an idle connection of the
// requests' pool when there is one, and [Via.Prewarm] dials one into an
// empty pool beside a handshake (a request made with [WithSpare], once it
// dials its own), so that what follows the handshake's
// answer waits for no dial (TestStandingStreamTakesIdle, TestPrewarm,
// transport's TestHandshakePrewarm).
//
// # What not to do here
//
// Do not add a feature of net/http's that the MCP transports do not
// need (cookies, Expect: 100-continue, trailers, HTTP/2): send that
// request through the http.Client instead, as [Via] does for the cases
// above. Every connection is dialled through [Dialer.DialContext], the
// SSRF guard's dialer in the Manager: never dial around it.
//
// # Concurrency
//
// A [Dialer] and a [Via] are safe for concurrent use; a response body is
// read by one goroutine at a time, as net/http's are.
package h1
