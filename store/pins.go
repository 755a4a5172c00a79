package store

import (
	"context"
	"encoding/json"
	"time"
)

// The states of a Pin.
const (
	PinPinned   = "pinned"   // the server lists the tool as pinned
	PinChanged  = "changed"  // the server lists a definition other than the pinned one (Seen)
	PinNew      = "new"      // the tool appeared after the server's first listing; not yet accepted
	PinRemoved  = "removed"  // the server no longer lists the tool
	PinRejected = "rejected" // a person rejected the tool's listed definition
)

// Pin is the pinned definition of one tool of one of an agent's servers,
// as stored: the definition the agent trusted when it first listed the
// tool (or a person accepted since), and what the server lists now when
// that differs. Definitions are canonical JSON (keys sorted, no
// insignificant whitespace) of the tool's name, title, description,
// input and output schemas and annotations; a fingerprint is the hex
// SHA-256 of a definition.
type Pin struct {
	Namespace string `json:"namespace"`
	ServerID  string `json:"serverId"`
	Tool      string `json:"tool"`
	// State is one of the Pin states.
	State string `json:"state"`
	// Fingerprint and Definition are the pinned definition's.
	Fingerprint string          `json:"fingerprint"`
	Definition  json.RawMessage `json:"definition"`
	// SeenFingerprint and Seen are the definition the server last listed,
	// when it differs from the pinned one; empty otherwise.
	SeenFingerprint string          `json:"seenFingerprint,omitempty"`
	Seen            json.RawMessage `json:"seen,omitempty"`
	// PinnedAt is when Definition was pinned; ChangedAt when State last
	// changed.
	PinnedAt  time.Time `json:"pinnedAt"`
	ChangedAt time.Time `json:"changedAt"`
}

// PinStore is implemented by stores that keep agents' pinned tool
// definitions (store/sqlite and store/postgres do), one readable JSON
// record per (agent, server, tool): a tool's definition holds no secret.
type PinStore interface {
	// PutPin inserts p, or replaces the pin of the same (Namespace,
	// ServerID, Tool). Under a Fence of the namespace (WithFence) it is
	// fenced as the server writes are.
	PutPin(ctx context.Context, p Pin) error
	// ListPins returns the pins of ns, ordered by server id then tool; an
	// empty slice when there are none.
	ListPins(ctx context.Context, ns string) ([]Pin, error)
	// DeletePins deletes the pins of server serverID of ns (none is not an
	// error), fenced as PutPin is.
	DeletePins(ctx context.Context, ns, serverID string) error
}
