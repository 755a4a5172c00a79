package postgres

import (
	"testing"

	"github.com/agentmcp/agentmcp/store"
)

// claim makes replica (registered live for an hour if it is not yet) the
// owner of ns with a new epoch, whoever owned it, and returns the fence.
func claim(t *testing.T, s *Store, ns, replica string) store.Fence {
	t.Helper()
	ctx := t.Context()
	if _, err := s.pool.Exec(ctx, `
		INSERT INTO agentmcp_replicas (id, cluster_url, version, expires_at)
		VALUES ($1, 'http://127.0.0.1:1', 'test', now() + interval '1 hour')
		ON CONFLICT (id) DO NOTHING`, replica); err != nil {
		t.Fatal(err)
	}
	f := store.Fence{Namespace: ns, Replica: replica}
	if err := s.pool.QueryRow(ctx, `
		INSERT INTO agentmcp_agents (namespace, owner, epoch, claimed_at)
		VALUES ($1, $2, nextval('agentmcp_lease_epoch'), now())
		ON CONFLICT (namespace) DO UPDATE SET owner = excluded.owner, epoch = excluded.epoch, claimed_at = excluded.claimed_at
		RETURNING epoch`, ns, replica).Scan(&f.Epoch); err != nil {
		t.Fatal(err)
	}
	return f
}
