-- The last catalog of each server of each agent (store.Catalog), so that
-- an agent woken or restored offers its servers' tools, prompts and
-- resources before they answer again.
CREATE TABLE catalogs (
	namespace  TEXT    NOT NULL,
	server_id  TEXT    NOT NULL,
	record     TEXT    NOT NULL, -- the lists, as JSON
	updated_at INTEGER NOT NULL, -- unix microseconds
	PRIMARY KEY (namespace, server_id)
) STRICT, WITHOUT ROWID;
