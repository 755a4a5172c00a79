package transport

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Optional abilities of a connection, beyond mcp.Connection. A client
// reaches them with a type assertion on the connection a transport's
// Connect returned (not on a wrapper of it); each is safe to call
// concurrently with the connection's other methods.

// SessionKeeper is implemented by connections whose server-side session
// can outlive them. After KeepSession, Close ends the connection but not
// the server's session (no DELETE), so that the session can be resumed
// later (see [Resume]).
type SessionKeeper interface {
	KeepSession()
}

// VersionSetter is implemented by connections that need to know the
// protocol version the handshake settled on, which the client learns from
// mcp.ClientSession.InitializeResult: a 2026-07-28 handshake
// (server/discover) has no response the transport could read it off, and
// the era decides which headers go on a request. Call SetNegotiatedVersion
// once, right after the handshake.
type VersionSetter interface {
	SetNegotiatedVersion(version string)
}

// DirectCaller is implemented by connections that can send a request and
// hand its response straight back to the caller, on the caller's
// goroutine, rather than through Read: no jsonrpc2 bookkeeping, no
// goroutine handoff, and the result decoded once, from the bytes, into the
// caller's value.
//
// CallDirect sends req, a request (not a notification), and decodes the
// result of its response into result, a pointer to the method's result
// type. An *mcp.CallToolResult is decoded as go-sdk decodes it, its plain
// text items and simple fields in one pass, the rest (input_required
// results, other kinds of content) by go-sdk's own UnmarshalJSON; any
// other type is decoded with encoding/json. A JSON-RPC error response is
// returned as its *jsonrpc.Error; an HTTP failure as the errors of Write.
//
// A tools/call result that needs input (a 2026-07-28 input_required
// result) is also kept in the Call of ctx ([WithCall]), if any: the next
// request written with that Call (Write) is answered with it locally,
// without a round trip, so that a client's multi round-trip logic (go-sdk's
// middleware), handed the same request, takes over from the first round
// rather than sending it again.
//
// The caller chooses req.ID, which must be unique on the connection and
// must not be one that the connection's client may use: go-sdk numbers
// its own requests with integers, so string ids are safe. req.Params must
// be complete (a 2026-07-28 request's _meta included). A [Call] in ctx
// ([WithCall]) names the tool, prompt or resource for the 2026-07-28
// headers, as for Write; its SplitText and FillContent play no part.
//
// Whatever else the server sends on the request's response stream
// (progress and other notifications, a 2025-11-25 server's requests) is
// handed to Read as usual, and may be read after CallDirect returned:
// a caller that needs a request's notifications before its result (a
// progress token) should send it through Write. When ctx ends first,
// CallDirect returns ctx.Err() and cancels the request as go-sdk's session
// does: notifications/cancelled (2025-11-25, sent in the background,
// bounded, waited for by Close), or closing the response stream
// (2026-07-28). On a closed connection it fails with
// mcp.ErrConnectionClosed.
type DirectCaller interface {
	CallDirect(ctx context.Context, req *jsonrpc.Request, result any) error
}

var (
	_ SessionKeeper = (*streamableConn)(nil)
	_ VersionSetter = (*streamableConn)(nil)
	_ DirectCaller  = (*streamableConn)(nil)
)
