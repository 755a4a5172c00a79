package store

import "context"

// Exposure is an agent's exposure rules as stored: which of its servers and
// tools its MCP endpoint exposes. Each entry is a pattern, "SERVER" or
// "SERVER/TOOL" with * and ? wildcards; agent.Exposure interprets and
// checks them. The zero value (no pattern) exposes everything.
type Exposure struct {
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
}

// IsZero reports whether e has no pattern.
func (e Exposure) IsZero() bool { return len(e.Allow) == 0 && len(e.Deny) == 0 }

// ExposureStore is implemented by stores that keep each agent's exposure
// rules (store/sqlite and store/postgres do). The rules are stored as one
// readable JSON document per agent (they are no secret), apart from the
// agent's servers: an agent without servers may have rules, and removing
// every server keeps them.
type ExposureStore interface {
	// GetExposure returns the rules of namespace ns, the zero Exposure
	// when none were stored.
	GetExposure(ctx context.Context, ns string) (Exposure, error)
	// PutExposure stores the rules of ns, replacing the previous ones; the
	// zero Exposure deletes them. Under a Fence of ns (WithFence) it is
	// fenced as the server writes are.
	PutExposure(ctx context.Context, ns string, e Exposure) error
}
