// Package sqlite is the embedded store.Store: one SQLite database file,
// through modernc.org/sqlite (pure Go, no cgo). It is the default for an
// agentmcp server on one machine.
//
// Open sets every connection to WAL mode with synchronous=FULL (a write
// that returned is on disk and survives a crash or power loss), a busy
// timeout (Options.BusyTimeout) and foreign keys on, then applies the
// embedded migrations (migrations/NNNN_name.sql, recorded in
// schema_migrations; all pending ones in one transaction, so a failed
// upgrade changes nothing and opening twice is a no-op). A database written
// by a newer build is refused.
//
// Schema (see migrations/):
//
//	servers(seq INTEGER PRIMARY KEY, namespace, id, name, url, callback_url,
//	        client_id, auth_url, options BLOB, keep_awake, created_at,
//	        updated_at, UNIQUE(namespace, id))
//	        indexes (namespace, seq), and (namespace) WHERE keep_awake
//	kv(namespace, server_id, key, value BLOB, expires_at,
//	   PRIMARY KEY(namespace, server_id, key))
//	exposure(namespace PRIMARY KEY, rules TEXT, updated_at)
//	tasks(namespace, server_id, task_id, record TEXT, seq, created_at,
//	      updated_at, PRIMARY KEY(namespace, server_id, task_id))
//	policies(namespace PRIMARY KEY, doc TEXT, updated_at)
//	approvals(namespace, id, state, record TEXT, seq, updated_at,
//	          PRIMARY KEY(namespace, id))
//	pins(namespace, server_id, tool, record TEXT, updated_at,
//	     PRIMARY KEY(namespace, server_id, tool))
//
// Times are unix microseconds; keep_awake is 0 or 1. options holds store.ServerOptions as JSON
// and value the key-value value, both sealed by store.Cipher.
//
// # Usage
//
//	st, err := sqlite.Open(ctx, "/var/lib/agentmcp/agentmcp.db", &sqlite.Options{Cipher: cipher})
//	if err != nil {
//		return err
//	}
//	defer st.Close()
//
// Besides store.Store, a Store has ListNamespaces (every agent),
// ListKeepAwake (store.KeepAwakeLister: the agents with a keep-awake
// server, from a partial index, so quick among many agents) and PutServers
// (store.BatchPutter: many rows in one transaction, for seeding large
// databases), and GetExposure and PutExposure (store.ExposureStore: each
// agent's exposure rules, store.Exposure as readable JSON), and PutTask,
// ListTasks and DeleteTask (store.TaskStore: each agent's tasks, readable
// JSON), GetPolicy and PutPolicy (store.PolicyStore: each agent's tool
// policy, readable JSON), and PutApproval, GetApproval, ListApprovals,
// SwapApproval and DeleteApprovals (store.ApprovalStore: each agent's
// approvals, readable JSON; a swap is one conditional UPDATE on the
// state), PutPin, ListPins and DeletePins (store.PinStore: the pinned
// definitions of each agent's tools, readable JSON; RenameServer moves a
// server's pins with it), and AppendAudit, QueryAudit and PruneAudit
// (store.AuditStore: each agent's audit log as one row per appended
// batch per agent, indexed by agent and first seq, its records in the
// compact encoding of store/internal/codec's AppendAuditBatch with their
// arguments sealed; a query picks rows by seq and time range, decodes and
// filters their records and stops at its limit, and pruning deletes whole
// rows and writes a boundary row again without its pruned records;
// migration 0010 made each record of the former one-row-a-record table a
// batch of one). An append numbers its records inside
// its write transaction, which holds the database's one write lock from
// its BEGIN IMMEDIATE to its commit (against other processes too), so
// appends commit in seq's order and a reader, which sees a committed
// prefix of the log, can never later find a seq below one it saw: a
// follower going on from its cursor misses nothing, unlike with a
// sequence shared by concurrent writers (see store/postgres).
//
// Open(ctx, sqlite.Memory, nil) opens a private in-memory database on a
// single connection, for tests; it disappears with Close.
//
// # Concurrency
//
// A Store is safe for concurrent use. It has one write connection, on which
// every write and every transaction runs in turn (each transaction starts
// with BEGIN IMMEDIATE), and a pool of read-only connections that read in
// parallel with it (Options.MaxReaders). Several processes may open the
// same file: SQLite's locks keep every operation atomic among them, and a
// writer waits up to BusyTimeout for another process's transaction.
// WithLock, however, excludes only the callers of one Store: run one
// process per database file (the supported deployment), or use
// store/postgres for several replicas. LockFileAs makes sure of it: the
// program that owns the database's agents takes an exclusive lock on a file
// beside it, saying what it is, and a second one gets a *LockedError naming
// the first (its process id, and what it said). Options.ReadOnly opens the
// database beside its owner to read it: nothing is created, migrated or
// written (every connection is query_only, a write fails with
// store.ErrUnavailable without taking the write lock).
//
// Fences (store.WithFence) are ignored: a fenced write is made as an
// unfenced one. A SQLite database has one process serving it (LockFileAs),
// which owns every agent in it, so there is no other owner to fence off.
//
// UpdateServer's fn runs inside the write transaction, so it holds up every
// other write until it returns: keep it short and do no I/O in it.
//
// # Errors
//
// Errors wrap store.ErrNotFound, store.ErrConflict, store.ErrDecrypt and
// store.ErrUnavailable as described by package store, and name the
// operation, the server id and the namespace. ErrUnavailable marks an
// operation that did not finish within Options.Timeout (a write waiting
// for another process's lock longer than that included) and SQLite's
// busy, locked, full, read-only, I/O and cannot-open errors; the write
// transaction is then rolled back. PutServers, one transaction of any
// size, is bounded by the caller's ctx only.
package sqlite
