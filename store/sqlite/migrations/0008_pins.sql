-- Agents' pinned tool definitions (store.Pin): one record per tool of
-- each server, the definition trusted and what the server lists now.
CREATE TABLE pins (
	namespace  TEXT    NOT NULL,
	server_id  TEXT    NOT NULL,
	tool       TEXT    NOT NULL,
	record     TEXT    NOT NULL, -- store.Pin, as JSON
	updated_at INTEGER NOT NULL, -- unix microseconds
	PRIMARY KEY (namespace, server_id, tool)
) STRICT, WITHOUT ROWID;
