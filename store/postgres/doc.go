// Package postgres is the store.Store for deployments that outgrow one
// machine: replicas of the agentmcp server share one PostgreSQL database
// (11 or newer), through pgx's connection pool.
//
// Open applies the embedded migrations (migrations/NNNN_name.sql, recorded
// in agentmcp_schema_migrations) in one transaction under an advisory lock,
// so replicas starting together migrate once, a failed upgrade changes
// nothing, and opening again is a no-op. A database migrated by a newer
// build is refused. Tables are prefixed agentmcp_ so they can live beside
// other applications' tables; use a schema of their own through the DSN's
// search_path if you prefer.
//
// Schema (see migrations/):
//
//	agentmcp_servers(seq BIGINT IDENTITY, namespace, id, name, url,
//	                 callback_url, client_id, auth_url, options BYTEA,
//	                 keep_awake BOOLEAN, created_at, updated_at TIMESTAMPTZ,
//	                 PRIMARY KEY(namespace, id))
//	                 indexes (namespace, seq), and (namespace) WHERE keep_awake
//	agentmcp_kv(namespace, server_id, key COLLATE "C", value BYTEA,
//	            expires_at TIMESTAMPTZ, PRIMARY KEY(namespace, server_id, key))
//	agentmcp_replicas(id PRIMARY KEY, cluster_url, version,
//	                  state 'live'|'draining', awake_agents INTEGER,
//	                  started_at, heartbeat_at, expires_at, fenced_at TIMESTAMPTZ)
//	agentmcp_agents(namespace PRIMARY KEY, owner, epoch BIGINT,
//	                claimed_at, released_at TIMESTAMPTZ) fillfactor 70
//	                index (owner) WHERE owner IS NOT NULL
//	sequence agentmcp_lease_epoch (fencing tokens)
//	agentmcp_exposure(namespace PRIMARY KEY, rules JSONB, updated_at TIMESTAMPTZ)
//	agentmcp_tasks(namespace, server_id, task_id, record TEXT, seq BIGSERIAL,
//	               created_at, updated_at, PRIMARY KEY(namespace, server_id, task_id))
//	agentmcp_policies(namespace PRIMARY KEY, doc TEXT, updated_at TIMESTAMPTZ)
//	agentmcp_approvals(namespace, id, state, record TEXT, seq BIGSERIAL, updated_at,
//	                   PRIMARY KEY(namespace, id))
//	agentmcp_pins(namespace, server_id, tool, record TEXT, updated_at,
//	              PRIMARY KEY(namespace, server_id, tool))
//
// options holds store.ServerOptions as JSON and value the key-value value,
// both sealed by store.Cipher.
//
// Besides store.Store, a Store has ListNamespaces (every agent),
// ListKeepAwake (store.KeepAwakeLister: the agents with a keep-awake
// server, from a partial index, so quick among many agents) and PutServers
// (store.BatchPutter: many rows in one transaction, for seeding large
// databases), and GetExposure and PutExposure (store.ExposureStore: each
// agent's exposure rules, readable JSON; PutExposure is fenced), and
// PutTask, ListTasks and DeleteTask (store.TaskStore: each agent's tasks,
// readable JSON; the writes are fenced), GetPolicy and PutPolicy
// (store.PolicyStore: each agent's tool policy, readable JSON; fenced),
// and PutApproval, GetApproval, ListApprovals, SwapApproval and
// DeleteApprovals (store.ApprovalStore: each agent's approvals, readable
// JSON; the writes are fenced, and a swap is one conditional UPDATE on the
// state, so that of two answers one wins), PutPin, ListPins and
// DeletePins (store.PinStore: the pinned definitions of each agent's
// tools, readable JSON; the writes are fenced; RenameServer moves a
// server's pins with it), and AppendAudit, QueryAudit and PruneAudit
// (store.AuditStore: each agent's audit log, a batch sent in one round
// trip and one transaction; not fenced: every replica appends the records
// of its own calls, seq numbering them across replicas in the order their
// inserts ran; the arguments sealed). An append holds a transaction-scoped
// advisory lock of each agent's log it writes from before it numbers its
// rows until it commits, so that one log's appends commit in seq's order
// and a follower going on from its cursor never skips a record that
// committed late (see audit.go for why this rather than reading behind
// the oldest transaction in flight).
//
// # Usage
//
//	st, err := postgres.Open(ctx, "postgres://agentmcp@db.internal/agentmcp?pool_max_conns=10",
//		&postgres.Options{Cipher: cipher})
//	if err != nil {
//		return err
//	}
//	defer st.Close()
//
// # Concurrency
//
// A Store is safe for concurrent use, and every operation is atomic across
// all processes using the database: KVTake is one DELETE ... RETURNING,
// UpdateServer locks the row (SELECT ... FOR UPDATE) until it commits,
// RenameServer and DeleteServer run in one transaction. WithLock takes a
// transaction-scoped advisory lock, so a lock excludes its holders in every
// replica; the lock's transaction holds a connection from a separate small
// pool (Options.LockConns) while fn runs, so fn can always use the Store.
// Key-value expiry is judged by each process's own clock (Options.Now):
// keep the replicas' clocks synchronised. Replica and lease expiry is
// judged by the database's clock only.
//
// # Replicas and leases
//
// agentmcp_replicas and agentmcp_agents hold the replicas of a cluster and
// the lease of each agent: an agent's lease is valid while its owner column
// names a replica whose row has not expired. Every expiry is set and judged
// by the database's clock (now() in SQL), never by a replica's. Every claim
// takes a new epoch from agentmcp_lease_epoch, the fencing token of that
// ownership. The methods, each documented with the guarantee of its SQL:
//
//	RegisterReplica, Heartbeat, SetReplicaState, DeleteReplica  a replica's own row
//	LiveReplicas, CleanupReplicas                               every replica's
//	Resolve, Claim, Release, ReleaseAll, Leases                 agent leases
//	Hold                                                        a lease held by a process that is no replica
//	UnownedKeepAwake                                            agents to wake eagerly (keep-awake, or a dead owner's running tasks)
//	Listen, Notify                                              hints on NotifyChannel
//
// A replica registers under an id of its own (one per process start),
// heartbeats well within its ttl, and stops trusting its leases before its
// row can expire; Heartbeat returning false means it has lost them all for
// good. It claims an agent before opening it and releases it after closing
// it; Release and ReleaseAll notify NotifyChannel with the namespace, in a
// statement of their own. Claims run at REPEATABLE READ (see Claim): two
// racing claimers never both win, and a claim never takes a lease from a
// live replica, however recent. The first claim that takes a lease from an
// expired replica marks its row fenced (fenced_at), and a heartbeat
// re-checks that mark after any claim it waited for: a claim and the
// previous owner's renewal never both succeed. A process that is not a
// replica (a terminal command opening an agent directly) holds an agent
// with Hold: registered draining and with no cluster URL in the claim's
// transaction, it is never a replica to place agents on, and replicas
// wait for it as for an owner they cannot reach.
//
// Options.ReadOnly opens a Store for reading only (after the migrations):
// its sessions are read-only, so every write fails (as on a read-only
// standby: ErrUnavailable), for a program reading agents others own.
//
// These methods are package cluster's cluster.LeaseStore, and they return
// its model (package cluster/lease: lease.Replica, lease.Owner and the
// states), so that cluster needs no concrete Store.
//
// # Fencing
//

// A server write (PutServer, PutServers, UpdateServer, DeleteServer,
// RenameServer) whose ctx carries a store.Fence of the row's namespace
// runs in a transaction that first checks that the fence is the agent's
// current, live lease and share-locks the lease row:
//
//	SELECT 1 FROM agentmcp_agents a JOIN agentmcp_replicas r ON r.id = a.owner
//	WHERE a.namespace = $1 AND a.owner = $2 AND a.epoch = $3 AND r.expires_at > now()
//	FOR SHARE OF a
//
// No row: the write fails with store.ErrFenced and writes nothing. The
// share lock makes a concurrent claim of the agent wait until the write
// commits, so a fenced write is either committed before a takeover (and
// the new owner reads it) or refused. PutServers checks the fence once when
// any of its rows is of the fence's namespace, and then refuses the whole
// batch. Key-value operations and WithLock are never fenced (OAuth tokens
// must be stored whoever refreshed them); without a fence in ctx, or with a
// fence of another namespace, writes are made as always.
//
// # Errors
//
// Errors wrap store.ErrNotFound, store.ErrConflict, store.ErrDecrypt,
// store.ErrFenced and store.ErrUnavailable as described by package store,
// and name the operation, the server id and the namespace. Connection
// errors are pgx's; the DSN's password never appears in them.
//
// ErrUnavailable marks an operation that did not finish within
// Options.Timeout (from taking a connection to the answer; its connection
// is then closed) and the errors of a database that cannot serve: a
// connection refused, reset or lost, SQLSTATE classes 08 (connection), 53
// (resources: disk full, too many connections) and 57P (shutting down,
// starting), a read-only standby. Every write runs in a transaction, even
// a single statement, because a statement a stopped server had received
// would still be run when it resumes, after its caller was told it
// failed; in a transaction, nothing is committed but by a COMMIT, so the
// one write that may still land after its deadline is one whose COMMIT was
// sent before it passed (its answer lost). A retry of it is safe: every
// write is idempotent but KVTake, whose value is then gone. WithLock's
// deadline bounds its connection and BEGIN, not the wait for the lock;
// PutServers, one transaction of any size, is bounded by the caller's ctx
// only.
package postgres
