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
//
// options holds store.ServerOptions as JSON and value the key-value value,
// both sealed by store.Cipher.
//
// Besides store.Store, a Store has ListNamespaces (every agent),
// ListKeepAwake (store.KeepAwakeLister: the agents with a keep-awake
// server, from a partial index, so quick among many agents) and PutServers
// (store.BatchPutter: many rows in one transaction, for seeding large
// databases).
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
// Expiry is judged by each process's own clock (Options.Now): keep the
// replicas' clocks synchronised.
//
// # Errors
//
// Errors wrap store.ErrNotFound, store.ErrConflict and store.ErrDecrypt
// as described by package store, and name the operation, the server id and
// the namespace. Connection errors are pgx's; the DSN's password never
// appears in them.
package postgres
