package transport

import (
	"github.com/agentmcp/agentmcp/internal/protocol"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Resume is what it takes to resume a streamable HTTP session without a
// handshake: the negotiated version, the legacy session id (none for
// 2026-07-28, which has no sessions) and what the handshake returned. It
// is stored as JSON.
type Resume struct {
	ProtocolVersion string                `json:"protocolVersion"`
	SessionID       string                `json:"sessionId,omitempty"`
	Result          *mcp.InitializeResult `json:"result"`
}

// Valid reports whether r can be resumed: a session needs a known
// protocol version and its handshake result, and a legacy one its session
// id. A nil Resume is not valid.
func (r *Resume) Valid() bool {
	return r != nil && r.Result != nil && protocol.Supported(r.ProtocolVersion) &&
		(r.ProtocolVersion >= ProtocolModern || r.SessionID != "")
}
