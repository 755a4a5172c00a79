// Package transport holds agentmcp's HTTP transports for MCP clients: the
// streamable HTTP transport in both protocol eras ([Streamable]) and the
// deprecated HTTP+SSE transport of 2024-11-05 ([SSE]). Each is an
// [mcp.Transport] of go-sdk, so a plain [mcp.Client] can use it alone;
// mcpclient's Manager uses it the same way.
//
// # Usage
//
//	client := mcp.NewClient(&mcp.Implementation{Name: "app", Version: "1.0"}, nil)
//	session, err := client.Connect(ctx, &transport.Streamable{
//		Endpoint:   "https://mcp.example.com/mcp",
//		HTTPClient: guarded, // an SSRF-guarded *http.Client (netguard)
//		Header:     http.Header{"X-Api-Key": {key}},
//	}, nil)
//
// The transports are configured by their exported fields, each of which
// documents its zero value. Compared with go-sdk's own transports they add
// typed HTTP errors, custom headers on every request, a size cap per
// message that fails one call rather than the connection, resumption of a
// saved session without a handshake ([Resume]), a bounded Close, and less
// work per message (docs/PERFORMANCE.md).
//
// # The contract with a client
//
// A client reaches a transport only through mcp.Transport and
// mcp.Connection, plus:
//
//   - [WithCall]: the one value the transports read from a request's
//     context. A [Call] names the tool, prompt or resource (the
//     2026-07-28 Mcp-Name and Mcp-Param-* headers) and lets the transport
//     decode the text items of a tools/call result itself; the client
//     puts them back with [Call.FillContent]. A request without a Call
//     works the same, with go-sdk decoding the whole result.
//   - The optional interfaces of a connection, reached by a type
//     assertion on what Connect returned: [SessionKeeper] (leave the
//     server's session alive on Close, for resumption), [VersionSetter]
//     (the negotiated protocol version) and [DirectCaller] (send a request
//     and get its decoded result back on the caller's goroutine, past
//     go-sdk's jsonrpc2 machinery: the one way a result the transport
//     decoded comes up).
//   - The errors below.
//
// # Lifecycle of a streamable connection
//
//	Connect ──► Write(initialize | server/discover) ──► POST ──► JSON or SSE response
//	   │                                                            │
//	   │          legacy era: GET stream (server requests,  ◄───────┘ the response is read;
//	   │          notifications), reopened with backoff and           a stream cut before it
//	   │          Last-Event-ID; 2026-07-28: none                     is resumed (legacy); a
//	   │                                                              subscriptions/listen cut
//	   │                                                              so is issued again, and
//	   │                                                              its lists announced as
//	   │                                                              changed (2026-07-28)
//	   ▼
//	Close ──► DELETE the session (legacy, unless kept) ──► streams stopped, readers waited for
//
// # Own connections
//
// A connection keeps one stream open for as long as it lives: the
// 2025-11-25 GET stream, the 2026-07-28 subscriptions/listen stream, or
// the 2024-11-05 event stream of [SSE]. Through net/http, that stream
// holds a pooled connection with its read and write loop goroutines, a
// buffered reader and writer, and the request that opened it; and each
// request is handed to those goroutines and back. With [Streamable.Dialer]
// set, a streamable connection's requests go on HTTP/1.1 connections of
// its own, written and read on the caller's goroutine and kept idle with
// no goroutine and no buffer, and its stream's request is written on a
// connection of its own (an idle one of the requests' taken over, else one
// dialled for it) and the response read from it directly:
// the stream's reader is its only goroutine, and while the stream is idle
// it holds no buffer (plain TCP on unix; 512 bytes otherwise). The
// handshake (initialize, server/discover) has a second connection dialled
// beside it, so that the stream and the first requests, which follow its
// answer at once, wait for no dial. With [Streamable.EarlyListen], a
// 2026-07-28 connection sends its subscriptions/listen on that connection
// as soon as server/discover is written, and go-sdk's listen, written
// after discover's answer, waits for that stream's acknowledgment instead
// of a round trip of its own; the lists that follow are still taken after
// the subscription.
// [SSE.Dialer] does the same for the event stream and the POSTs. Both
// fall back to the HTTPClient when a proxy applies,
// when the server answers over HTTP/2 (one shared connection then), and
// after a redirect. The Manager sets it for its default client, dialling
// through its SSRF guard.
//
// # Concurrency
//
// A transport's fields must not change once it is used. A connection's
// Read, Write and Close may be called concurrently, as mcp.Connection
// requires; Close is idempotent, bounded (the DELETE of a session waits at
// most two seconds) and waits for every goroutine the connection started.
// A legacy initialize whose caller gave up is not cut short on the wire:
// the server may have made its session already, so its answer is awaited
// in the background (at most two seconds) and the session it names ended
// with a DELETE. Close waits for that while [Streamable.Life] lasts; once
// it ended (the Manager's server closed or removed, the Manager or its
// agent closed), Close returns at once, even when the server holds its
// answer, and the wait ends by itself within its bound. A session the server rejected
// other than with a 404 is ended by Close too: it may live on.
//
// # Errors
//
// An HTTP status the transport cannot use is an [*HTTPError] (method,
// redacted URL, status, WWW-Authenticate, the server's JSON-RPC error if
// any). errors.Is matches [ErrUnauthorized] (401, or 403 with a Bearer
// error), [ErrTransportNotImplemented] (404 or 405 without a JSON-RPC
// error), [ErrSessionExpired] (the server no longer knows the session; it
// also wraps mcp.ErrSessionMissing) and [ErrProtocol] (malformed JSON, a
// message over the cap, an SSE stream without an endpoint event). A Write
// error about one request only (an HTTP error, a malformed response) fails
// that request and leaves the connection usable. Errors and logs never
// carry header values, URL queries or userinfo.
package transport
