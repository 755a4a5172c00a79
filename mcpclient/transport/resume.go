package transport

import (
	"slices"

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

// supportedVersions are the protocol versions a session can be resumed in.
var supportedVersions = []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// Valid reports whether r can be resumed: a session needs a known
// protocol version and its handshake result, and a legacy one its session
// id. A nil Resume is not valid.
func (r *Resume) Valid() bool {
	return r != nil && r.Result != nil && slices.Contains(supportedVersions, r.ProtocolVersion) &&
		(r.ProtocolVersion >= ProtocolModern || r.SessionID != "")
}
