-- Servers of every agent: one row per (namespace, id). seq keeps the order in
-- which rows were first written; updates and renames keep it.
CREATE TABLE servers (
	seq          INTEGER PRIMARY KEY,
	namespace    TEXT    NOT NULL,
	id           TEXT    NOT NULL,
	name         TEXT    NOT NULL,
	url          TEXT    NOT NULL,
	callback_url TEXT    NOT NULL,
	client_id    TEXT    NOT NULL,
	auth_url     TEXT    NOT NULL,
	options      BLOB    NOT NULL, -- store.ServerOptions as JSON, sealed by store.Cipher
	created_at   INTEGER NOT NULL, -- unix microseconds
	updated_at   INTEGER NOT NULL, -- unix microseconds
	UNIQUE (namespace, id)
) STRICT;

CREATE INDEX servers_namespace_seq ON servers (namespace, seq);

-- OAuth key-value entries, scoped by agent and server. No foreign key to
-- servers: entries may be written before the server's row (client
-- registration during the first connect).
CREATE TABLE kv (
	namespace  TEXT    NOT NULL,
	server_id  TEXT    NOT NULL,
	key        TEXT    NOT NULL,
	value      BLOB    NOT NULL, -- sealed by store.Cipher
	expires_at INTEGER,          -- unix microseconds; NULL never expires
	PRIMARY KEY (namespace, server_id, key)
) STRICT, WITHOUT ROWID;
