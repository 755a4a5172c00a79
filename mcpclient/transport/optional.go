package transport

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

var (
	_ SessionKeeper = (*streamableConn)(nil)
	_ VersionSetter = (*streamableConn)(nil)
)
