// Package protocol is the one home of the MCP protocol versions agentmcp
// speaks and of the two eras they fall in. Every list of versions and
// every era test outside tests reads it, so the next version is added
// here and nowhere else.
//
// The eras:
//
//   - the session era (2024-11-05 to 2025-11-25): an initialize
//     handshake, a session (Mcp-Session-Id over streamable HTTP), a
//     standalone GET stream for the server's messages;
//   - the stateless era (2026-07-28 on): server/discover instead of the
//     handshake, no sessions, Mcp-Method and Mcp-Name headers on every
//     request, subscriptions/listen instead of the GET stream.
//
// Versions are dates written YYYY-MM-DD, so they compare as strings: a
// version is in the stateless era when it is at least [Stateless].
package protocol

import "slices"

const (
	// Stateless is the first version of the stateless era.
	Stateless = "2026-07-28"
	// LatestSession is the newest version of the session era.
	LatestSession = "2025-11-25"
)

// versions are the protocol versions agentmcp speaks, newest first.
var versions = [...]string{Stateless, LatestSession, "2025-06-18", "2025-03-26", "2024-11-05"}

// Versions returns the protocol versions agentmcp speaks, newest first.
// The slice is the caller's.
func Versions() []string { return slices.Clone(versions[:]) }

// SessionVersions returns the versions of the session era (the ones
// before [Stateless]), newest first: go-sdk's server's default list. The
// slice is the caller's.
func SessionVersions() []string {
	return slices.DeleteFunc(Versions(), IsStateless)
}

// Supported reports whether agentmcp speaks version v.
func Supported(v string) bool { return slices.Contains(versions[:], v) }

// IsStateless reports whether v is in the stateless era (at least
// [Stateless]; an unknown later version counts as stateless).
func IsStateless(v string) bool { return v >= Stateless }

// IsSession reports whether v is a supported version of the session era.
func IsSession(v string) bool { return Supported(v) && !IsStateless(v) }
