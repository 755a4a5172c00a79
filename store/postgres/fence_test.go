package postgres

import (
	"errors"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/store"
)

// claim makes replica (registered live for an hour if it is not yet) the
// owner of ns with a new epoch, releasing the lease of its current owner
// first, and returns the fence: the storetest suite's Backend.Claim.
func claim(t *testing.T, s *Store, ns, replica string) store.Fence {
	t.Helper()
	ctx := t.Context()
	if err := s.RegisterReplica(ctx, replica, "http://127.0.0.1:1", "test", time.Hour); err != nil && !errors.Is(err, store.ErrConflict) {
		t.Fatal(err)
	}
	o, err := s.Resolve(ctx, ns)
	if err != nil {
		t.Fatal(err)
	}
	if o.Replica != "" {
		if err := s.Release(ctx, store.Fence{Namespace: ns, Replica: o.Replica, Epoch: o.Epoch}); err != nil {
			t.Fatal(err)
		}
	}
	f, ok, err := s.Claim(ctx, ns, replica)
	if err != nil || !ok {
		t.Fatalf("Claim(%q, %q) = %v, %v", ns, replica, ok, err)
	}
	return f
}

// forceLease writes a lease of ns naming replica with a new epoch, whether
// or not replica is live (as if it had claimed ns before it expired), and
// returns its fence.
func forceLease(t *testing.T, s *Store, ns, replica string) store.Fence {
	t.Helper()
	f := store.Fence{Namespace: ns, Replica: replica}
	if err := s.pool.QueryRow(t.Context(), `
		INSERT INTO agentmcp_agents (namespace, owner, epoch, claimed_at)
		VALUES ($1, $2, nextval('agentmcp_lease_epoch'), now())
		ON CONFLICT (namespace) DO UPDATE SET owner = excluded.owner, epoch = excluded.epoch, claimed_at = excluded.claimed_at
		RETURNING epoch`, ns, replica).Scan(&f.Epoch); err != nil {
		t.Fatal(err)
	}
	return f
}
