-- Servers of every agent: one row per (namespace, id). seq keeps the order in
-- which rows were first written; updates and renames keep it.
CREATE TABLE agentmcp_servers (
	seq          BIGINT      GENERATED ALWAYS AS IDENTITY,
	namespace    TEXT        NOT NULL,
	id           TEXT        NOT NULL,
	name         TEXT        NOT NULL,
	url          TEXT        NOT NULL,
	callback_url TEXT        NOT NULL,
	client_id    TEXT        NOT NULL,
	auth_url     TEXT        NOT NULL,
	options      BYTEA       NOT NULL, -- store.ServerOptions as JSON, sealed by store.Cipher
	created_at   TIMESTAMPTZ NOT NULL,
	updated_at   TIMESTAMPTZ NOT NULL,
	PRIMARY KEY (namespace, id)
);

CREATE INDEX agentmcp_servers_namespace_seq ON agentmcp_servers (namespace, seq);

-- OAuth key-value entries, scoped by agent and server. No foreign key to
-- servers: entries may be written before the server's row (client
-- registration during the first connect).
CREATE TABLE agentmcp_kv (
	namespace  TEXT        NOT NULL,
	server_id  TEXT        NOT NULL,
	key        TEXT        COLLATE "C" NOT NULL,
	value      BYTEA       NOT NULL, -- sealed by store.Cipher
	expires_at TIMESTAMPTZ,          -- NULL never expires
	PRIMARY KEY (namespace, server_id, key)
);
