package store

import (
	"context"
	"encoding/json"
)

// PolicyStore is implemented by stores that keep each agent's tool policy
// (store/sqlite and store/postgres do): one readable JSON document per
// agent (a policy holds no secret), in the form package policy parses,
// apart from the agent's servers.
type PolicyStore interface {
	// GetPolicy returns the policy document of namespace ns, nil when none
	// was stored.
	GetPolicy(ctx context.Context, ns string) (json.RawMessage, error)
	// PutPolicy stores the policy document of ns, replacing the previous
	// one; a nil or empty doc deletes it. Under a Fence of ns (WithFence)
	// it is fenced as the server writes are.
	PutPolicy(ctx context.Context, ns string, doc json.RawMessage) error
}
