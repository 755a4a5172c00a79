package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agentmcp/agentmcp/cluster/lease"
	"github.com/agentmcp/agentmcp/store"
	"github.com/agentmcp/agentmcp/store/internal/codec"
)

// NotifyChannel is the PostgreSQL notification channel of a cluster's
// hints (Release, ReleaseAll, Notify; received by Listen).
const NotifyChannel = "agentmcp_cluster"

// The model of replicas and leases (lease.Replica, lease.Owner and the
// states) is package cluster/lease's: package cluster acts on it through
// cluster.LeaseStore, which Store implements.

// interval returns d as microseconds, for "$n * interval '1 microsecond'"
// (durations are added to the database's now(), never to Go's clock).
func interval(d time.Duration) int64 { return d.Microseconds() }

// checkReplica checks a replica id.
func checkReplica(id string) error {
	if id == "" || !utf8.ValidString(id) || strings.ContainsRune(id, 0) {
		return errors.New("replica id must be non-empty text")
	}
	return nil
}

// RegisterReplica adds the replica id, live until ttl from now on the
// database's clock, in state lease.ReplicaLive, with its internal listener
// clusterURL and build version. An id is an incarnation: registering an id
// that has a row (live or expired) fails with an error wrapping
// store.ErrConflict, so an expired replica can never come back under its
// old id; register a new one instead. A ttl of zero or less registers a
// replica that is not live (for tests).
func (s *Store) RegisterReplica(ctx context.Context, id, clusterURL, version string, ttl time.Duration) error {
	err := checkReplica(id)
	if err == nil {
		_, err = s.pool.Exec(ctx, `
			INSERT INTO agentmcp_replicas (id, cluster_url, version, expires_at)
			VALUES ($1, $2, $3, now() + $4 * interval '1 microsecond')`,
			id, clusterURL, version, interval(ttl))
	}
	if err != nil {
		return fmt.Errorf("postgres: register replica %q: %w", id, mapErr(err))
	}
	return nil
}

// Heartbeat renews the replica id's liveness until ttl from now on the
// database's clock and records awake, its number of awake agents, with one
// statement:
//
//	UPDATE agentmcp_replicas SET heartbeat_at = now(), expires_at = now() + ttl, awake_agents = awake
//	WHERE id = $id AND expires_at > clock_timestamp() AND fenced_at IS NULL
//
// The guard is judged by the time it is evaluated (clock_timestamp(), not
// the statement's start, now()); fenced_at is set by the first Claim that
// found the row expired, and a renewal that waited for that claim
// re-evaluates the guard on the marked row and fails.
//
// It returns false when the row has expired or is gone: then the replica
// has lost every lease it held (others may have claimed its agents), and it
// can never be renewed again (the guard means liveness never comes back
// once lost); the replica must stop acting for its agents
// and register under a new id. A ttl of zero or less ends the replica's
// liveness at once, for good. A replica's trust in its leases should end
// before its row expires: start of the last successful Heartbeat + ttl − a
// margin, on a monotonic clock.
func (s *Store) Heartbeat(ctx context.Context, id string, ttl time.Duration, awake int) (bool, error) {
	tag, err := s.pool.Exec(ctx, `
		UPDATE agentmcp_replicas
		SET heartbeat_at = now(), expires_at = now() + $2 * interval '1 microsecond', awake_agents = $3
		WHERE id = $1 AND expires_at > clock_timestamp() AND fenced_at IS NULL`,
		id, interval(ttl), awake)
	if err != nil {
		return false, fmt.Errorf("postgres: heartbeat of replica %q: %w", id, err)
	}
	return tag.RowsAffected() == 1, nil
}

// SetReplicaState sets the state of the replica id: lease.ReplicaLive, or
// lease.ReplicaDraining (it then claims no agent; others stop placing agents on
// it). It does not renew or revive the replica. A missing row is an error
// wrapping store.ErrNotFound.
func (s *Store) SetReplicaState(ctx context.Context, id, state string) error {
	var err error
	if state != lease.ReplicaLive && state != lease.ReplicaDraining {
		err = fmt.Errorf("unknown state %q", state)
	} else {
		var tag pgconn.CommandTag
		tag, err = s.pool.Exec(ctx, `UPDATE agentmcp_replicas SET state = $2 WHERE id = $1`, id, state)
		if err == nil && tag.RowsAffected() == 0 {
			err = store.ErrNotFound
		}
	}
	if err != nil {
		return fmt.Errorf("postgres: set state of replica %q: %w", id, err)
	}
	return nil
}

// DeleteReplica deletes the row of the replica id, on a clean exit: every
// lease it still names becomes invalid at once (call ReleaseAll first so
// that others learn it through Listen). A missing row is not an error.
func (s *Store) DeleteReplica(ctx context.Context, id string) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM agentmcp_replicas WHERE id = $1`, id); err != nil {
		return fmt.Errorf("postgres: delete replica %q: %w", id, err)
	}
	return nil
}

// LiveReplicas returns the replicas that are live on the database's clock:
// those in state lease.ReplicaLive first, then the draining ones, each group
// least awake agents first (then by id); an empty slice when there are none.
func (s *Store) LiveReplicas(ctx context.Context) ([]lease.Replica, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT id, cluster_url, version, state, awake_agents, expires_at, true
		FROM agentmcp_replicas WHERE expires_at > now()
		ORDER BY state <> 'live', awake_agents, id`)
	var out []lease.Replica
	if err == nil {
		out, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (lease.Replica, error) {
			var r lease.Replica
			err := row.Scan(&r.ID, &r.ClusterURL, &r.Version, &r.State, &r.AwakeAgents, &r.ExpiresAt, &r.Live)
			r.ExpiresAt = r.ExpiresAt.UTC()
			return r, err
		})
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: list live replicas: %w", err)
	}
	if out == nil {
		out = []lease.Replica{}
	}
	return out, nil
}

// Resolve returns the lease of the agent ns with one read:
//
//	SELECT a.owner, a.epoch, r.cluster_url, r.expires_at > now(), r.state, r.expires_at - now()
//	FROM agentmcp_agents a LEFT JOIN agentmcp_replicas r ON r.id = a.owner
//	WHERE a.namespace = $1
//
// An agent never claimed is lease.Owner{Namespace: ns} (Replica ""). The answer
// may be stale as soon as it is read; Claim and the fenced writes are what
// decide.
func (s *Store) Resolve(ctx context.Context, ns string) (lease.Owner, error) {
	o := lease.Owner{Namespace: ns}
	err := codec.CheckNamespace(ns)
	if err == nil {
		var owner, url, state *string
		var live *bool
		var left *int64 // microseconds
		err = s.pool.QueryRow(ctx, `
			SELECT a.owner, a.epoch, r.cluster_url, r.expires_at > now(), r.state,
				(extract(epoch FROM r.expires_at - now()) * 1000000)::bigint
			FROM agentmcp_agents a LEFT JOIN agentmcp_replicas r ON r.id = a.owner
			WHERE a.namespace = $1`, ns).Scan(&owner, &o.Epoch, &url, &live, &state, &left)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return o, nil
		case err == nil && owner != nil:
			o.Replica = *owner
			if url != nil {
				o.ClusterURL, o.Live, o.State = *url, *live, *state
			}
			if o.Live && left != nil {
				o.ExpiresIn = time.Duration(max(*left, 0)) * time.Microsecond
			}
		}
	}
	if err != nil {
		return lease.Owner{}, fmt.Errorf("postgres: resolve owner of %q: %w", ns, err)
	}
	return o, nil
}

// claimFenceSQL marks the row of the agent $1's owner fenced when that row
// has expired and is not marked yet. Writing the row serialises the claim
// with the owner's heartbeat: a renewal in flight makes the claim wait,
// then fail to serialise and look again (finding the owner live); a
// renewal that comes after re-checks its guard on the marked row and
// fails. Only the first claim after the expiry writes the row, so claims
// of many agents of one dead replica do not queue behind each other.
const claimFenceSQL = `
	UPDATE agentmcp_replicas r SET fenced_at = now()
	FROM agentmcp_agents a
	WHERE a.namespace = $1 AND r.id = a.owner AND r.expires_at <= now() AND r.fenced_at IS NULL`

// claimAttempts bounds Claim's retries after serialization failures.
const claimAttempts = 10

// claimSQL claims $1 for $2 when $2 is live and in state 'live', and the
// agent has no valid lease of another replica: no row, no owner, $2 as the
// owner, or an owner whose replica row has expired or is gone. It returns
// the new epoch, or no row.
const claimSQL = `
	WITH me AS (SELECT 1 FROM agentmcp_replicas WHERE id = $2 AND state = 'live' AND expires_at > now())
	INSERT INTO agentmcp_agents AS a (namespace, owner, epoch, claimed_at)
	SELECT $1, $2, nextval('agentmcp_lease_epoch'), now() FROM me
	ON CONFLICT (namespace) DO UPDATE
		SET owner = excluded.owner, epoch = excluded.epoch, claimed_at = excluded.claimed_at
		WHERE a.owner IS NULL OR a.owner = $2
			OR NOT EXISTS (SELECT 1 FROM agentmcp_replicas r WHERE r.id = a.owner AND r.expires_at > now())
	RETURNING a.epoch`

// Claim makes replica the owner of the agent ns, with a new epoch from
// agentmcp_lease_epoch, if replica is live and in state lease.ReplicaLive and no
// other replica holds a valid lease of the agent (it was never claimed, was
// released, or is owned by a replica whose row has expired or is gone). It
// returns the Fence of the new ownership and true; or false when another
// live replica owns the agent (Resolve names it) or replica may not claim.
// A replica that claims an agent it already owns gets a new epoch: the
// fence of its earlier ownership is refused from then on, so an instance
// of the agent it failed to close cannot write. Claims are one INSERT ... ON CONFLICT DO UPDATE ...
// RETURNING statement: the lease row's lock serialises racing claimers, so
// exactly one of them wins. A claim waits for fenced writes in progress
// under the previous ownership (they share-lock the row) and is made after
// they commit.
//
// The statement runs at REPEATABLE READ and is retried on a serialization
// failure, so that the liveness of the previous owner is judged on a
// snapshot that includes every row committed before the lease row it
// replaces (at READ COMMITTED a claimer could miss a replica that
// registered and claimed after its statement began). Before it, the same
// transaction marks an expired previous owner's row fenced (fenced_at), so
// that a claim and that owner's Heartbeat never both succeed: a renewal in
// flight makes the claim wait and then find the owner live; a later
// renewal finds the row fenced.
func (s *Store) Claim(ctx context.Context, ns, replica string) (store.Fence, bool, error) {
	f := store.Fence{Namespace: ns, Replica: replica}
	err := errors.Join(codec.CheckNamespace(ns), checkReplica(replica))
	for attempt := 1; err == nil; attempt++ {
		err = pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead}, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, claimFenceSQL, ns); err != nil {
				return err
			}
			return tx.QueryRow(ctx, claimSQL, ns, replica).Scan(&f.Epoch)
		})
		var pe *pgconn.PgError
		switch {
		case err == nil:
			return f, true, nil
		case errors.Is(err, pgx.ErrNoRows):
			return store.Fence{}, false, nil
		case errors.As(err, &pe) && pe.Code == "40001" && attempt < claimAttempts:
			err = nil // a concurrent claim or release: look again
		}
	}
	return store.Fence{}, false, fmt.Errorf("postgres: claim %q for replica %q: %w", ns, replica, err)
}

// errNotHeld aborts Hold's transaction when a live replica owns the agent.
var errNotHeld = errors.New("held by a live replica")

// Hold makes holder, a process that is not a replica (a terminal command
// opening the database directly), the owner of the agent ns as Claim
// does, registering holder in the same transaction as RegisterReplica does
// (with no cluster URL, live until ttl) but in state lease.ReplicaDraining:
// no replica ever sees it live, so none places an agent on it, and one
// asked for ns waits for it (an owner with no cluster URL is not tried)
// until it is released. Renew it with Heartbeat; end it with Release, then
// DeleteReplica. It returns false, registering nothing, when a live
// replica (or holder) owns the agent: Resolve names it.
func (s *Store) Hold(ctx context.Context, ns, holder, version string, ttl time.Duration) (store.Fence, bool, error) {
	f := store.Fence{Namespace: ns, Replica: holder}
	err := errors.Join(codec.CheckNamespace(ns), checkReplica(holder))
	for attempt := 1; err == nil; attempt++ {
		err = pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead}, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `
				INSERT INTO agentmcp_replicas (id, cluster_url, version, expires_at)
				VALUES ($1, '', $2, now() + $3 * interval '1 microsecond')`,
				holder, version, interval(ttl)); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, claimFenceSQL, ns); err != nil {
				return err
			}
			err := tx.QueryRow(ctx, claimSQL, ns, holder).Scan(&f.Epoch)
			if errors.Is(err, pgx.ErrNoRows) {
				return errNotHeld
			}
			if err != nil {
				return err
			}
			_, err = tx.Exec(ctx, `UPDATE agentmcp_replicas SET state = 'draining' WHERE id = $1`, holder)
			return err
		})
		var pe *pgconn.PgError
		switch {
		case err == nil:
			return f, true, nil
		case errors.Is(err, errNotHeld):
			return store.Fence{}, false, nil
		case errors.As(err, &pe) && pe.Code == "40001" && attempt < claimAttempts:
			err = nil // a concurrent claim or release: look again
		}
	}
	return store.Fence{}, false, fmt.Errorf("postgres: hold %q for %q: %w", ns, holder, mapErr(err))
}

// Release ends the ownership f if it is still the agent's current one:
//
//	UPDATE agentmcp_agents SET owner = NULL, released_at = now()
//	WHERE namespace = $1 AND owner = $2 AND epoch = $3
//
// then, in a statement of its own, sends the namespace to NotifyChannel.
// Call it only after the agent is closed: the next claim may open it
// elsewhere at once. A fence that is no longer current releases nothing
// (a newer ownership is never undone) and sends nothing; that is not an
// error. If only the notification fails, the lease is released and the
// error says so.
func (s *Store) Release(ctx context.Context, f store.Fence) error {
	tag, err := s.pool.Exec(ctx, `
		UPDATE agentmcp_agents SET owner = NULL, released_at = now()
		WHERE namespace = $1 AND owner = $2 AND epoch = $3`,
		f.Namespace, f.Replica, f.Epoch)
	if err != nil {
		return fmt.Errorf("postgres: release %q (epoch %d): %w", f.Namespace, f.Epoch, err)
	}
	if tag.RowsAffected() == 0 {
		return nil
	}
	if err := s.notify(ctx, []string{f.Namespace}); err != nil {
		return fmt.Errorf("postgres: release %q (epoch %d): released, but %w", f.Namespace, f.Epoch, err)
	}
	return nil
}

// ReleaseAll releases every lease that names replica as the owner, for a
// drain or a clean exit, after its agents are closed; then sends each
// released namespace to NotifyChannel, all in one statement of their own.
// As with Release, a failed notification leaves the leases released.
func (s *Store) ReleaseAll(ctx context.Context, replica string) error {
	rows, err := s.pool.Query(ctx, `
		UPDATE agentmcp_agents SET owner = NULL, released_at = now()
		WHERE owner = $1 RETURNING namespace`, replica)
	var released []string
	if err == nil {
		released, err = pgx.CollectRows(rows, pgx.RowTo[string])
	}
	if err != nil {
		return fmt.Errorf("postgres: release the agents of replica %q: %w", replica, err)
	}
	if err := s.notify(ctx, released); err != nil {
		return fmt.Errorf("postgres: release the agents of replica %q: released %d, but %w", replica, len(released), err)
	}
	return nil
}

// Notify sends payload to NotifyChannel (for hints other than released
// agents, such as a replica draining). Payloads are at most 8,000 bytes and
// must not be empty; keep them short and rare.
func (s *Store) Notify(ctx context.Context, payload string) error {
	if payload == "" {
		return errors.New("postgres: notify: empty payload")
	}
	return s.notify(ctx, []string{payload})
}

// notify sends every payload to NotifyChannel in one autocommit statement
// (never inside a transaction others contend with: a notifying commit takes
// a database-wide lock).
func (s *Store) notify(ctx context.Context, payloads []string) error {
	if len(payloads) == 0 {
		return nil
	}
	if _, err := s.pool.Exec(ctx, `SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p`, NotifyChannel, payloads); err != nil {
		return fmt.Errorf("notify: %w", err)
	}
	return nil
}

// listenCloseTimeout bounds the goodbye to the server when Listen ends.
const listenCloseTimeout = 5 * time.Second

// Listen listens on NotifyChannel on a connection of its own (not from the
// pool, and not through a transaction-mode pooler: LISTEN needs a session)
// and calls fn with each notification's payload, in order, until ctx ends.
// It calls fn("") once first, when the LISTEN is in effect: hints sent
// before that were missed, so a caller drops what it cached from earlier
// hints. Release and ReleaseAll send namespaces; Notify sends what it is
// given. fn runs on Listen's goroutine and holds up the next notification:
// keep it quick. Notifications are hints only, delivered after their
// sender's commit and lost while no Listen runs; nothing may depend on them
// for safety.
//
// Listen returns nil when ctx ends, or the error that ended the connection
// (the server restarted, the network failed): call it again to resume, and
// treat the gap as missed hints.
func (s *Store) Listen(ctx context.Context, fn func(payload string)) error {
	if s.closed.Load() {
		return errors.New("postgres: listen: store is closed")
	}
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("postgres: listen: %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), listenCloseTimeout)
		defer cancel()
		conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, `LISTEN `+NotifyChannel); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("postgres: listen: %w", err)
	}
	fn("")
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("postgres: listen: %w", err)
		}
		fn(n.Payload)
	}
}

// CleanupReplicas deletes the rows of replicas that expired more than
// olderThan ago on the database's clock, and returns how many it deleted.
// Leases still naming them stay invalid (an owner without a row owns
// nothing). Any replica may run it, now and then (every minute, with an
// hour for olderThan); the expired rows kept meanwhile show recent crashes.
func (s *Store) CleanupReplicas(ctx context.Context, olderThan time.Duration) (int, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM agentmcp_replicas WHERE expires_at < now() - $1 * interval '1 microsecond'`, interval(olderThan))
	if err != nil {
		return 0, fmt.Errorf("postgres: clean up replicas: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// Leases returns the valid leases of replica, the agents it owns while its
// row is live, ordered by namespace; an empty slice when it owns none or
// has expired. One query re-validates every lease a replica believes it
// holds (after a lost database connection, or a database failover).
func (s *Store) Leases(ctx context.Context, replica string) ([]store.Fence, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT a.namespace, a.epoch FROM agentmcp_agents a JOIN agentmcp_replicas r ON r.id = a.owner
		WHERE a.owner = $1 AND r.expires_at > now()
		ORDER BY a.namespace`, replica)
	var out []store.Fence
	if err == nil {
		out, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.Fence, error) {
			f := store.Fence{Replica: replica}
			return f, row.Scan(&f.Namespace, &f.Epoch)
		})
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: leases of replica %q: %w", replica, err)
	}
	if out == nil {
		out = []store.Fence{}
	}
	return out, nil
}

// UnownedKeepAwake returns up to limit agents, ordered by namespace, that
// have a keep-awake server (store.Server.KeepAwake) and no valid lease:
// never claimed, released, or owned by a replica whose row has expired or
// is gone. These are the agents to wake eagerly (claim, then open) after a
// replica died or drained; the others wake on their next request. It also
// returns the agents owned by a replica that died holding them while a
// task of theirs (store.Task) had not ended: woken, they resume polling
// it. An agent with a running task that was released (hibernated) is not
// one: the replica that hibernated it wakes it to poll.
func (s *Store) UnownedKeepAwake(ctx context.Context, limit int) ([]string, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT k.namespace FROM (
			SELECT DISTINCT namespace FROM agentmcp_servers WHERE keep_awake
			UNION
			SELECT a.namespace FROM agentmcp_agents a
			WHERE a.owner IS NOT NULL AND EXISTS (
				SELECT 1 FROM agentmcp_tasks t
				WHERE t.namespace = a.namespace AND (t.record::jsonb ->> 'done') IS NULL)) k
		WHERE NOT EXISTS (
			SELECT 1 FROM agentmcp_agents a JOIN agentmcp_replicas r ON r.id = a.owner
			WHERE a.namespace = k.namespace AND r.expires_at > now())
		ORDER BY k.namespace LIMIT $1`, limit)
	var out []string
	if err == nil {
		out, err = pgx.CollectRows(rows, pgx.RowTo[string])
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: list unowned keep-awake agents: %w", err)
	}
	if out == nil {
		out = []string{}
	}
	return out, nil
}
