package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agentmcp/agentmcp/store"
)

// fenceCheck finds the lease row of a fence if the fence is the agent's
// current ownership and its replica is live, and share-locks it until the
// transaction ends. A claim by another replica updates that row, so it
// waits for the fenced write to commit: a fenced write is either committed
// before the takeover (and the new owner reads it) or refused. If a claim
// commits while the check waits for the row, the check re-reads the claimed
// row, no longer finds the fence's owner and epoch, and refuses.
const fenceCheck = `
	SELECT 1 FROM agentmcp_agents a JOIN agentmcp_replicas r ON r.id = a.owner
	WHERE a.namespace = $1 AND a.owner = $2 AND a.epoch = $3 AND r.expires_at > now()
	FOR SHARE OF a`

// checkFence runs fenceCheck for f in tx, returning store.ErrFenced when f
// is not the current, live ownership of its namespace.
func checkFence(ctx context.Context, tx pgx.Tx, f store.Fence) error {
	var one int
	err := tx.QueryRow(ctx, fenceCheck, f.Namespace, f.Replica, f.Epoch).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.ErrFenced
	}
	return err
}

// checkFenceFor runs checkFence when ctx carries a fence of namespace ns,
// and does nothing otherwise.
func checkFenceFor(ctx context.Context, tx pgx.Tx, ns string) error {
	if f, ok := store.FenceFrom(ctx); ok && f.Namespace == ns {
		return checkFence(ctx, tx, f)
	}
	return nil
}

// execer is what the single-statement writes need: the pool, or a
// transaction.
type execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// fenced runs the single-statement write fn of namespace ns in a
// transaction that, when ctx carries a fence of ns, checks the fence first
// (and writes nothing if it fails). The transaction is there even without a
// fence, for the reason Store.write gives.
func (s *Store) fenced(ctx context.Context, ns string, fn func(db execer) error) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := checkFenceFor(ctx, tx, ns); err != nil {
			return err
		}
		return fn(tx)
	})
}
