-- The last catalog of each server of each agent (store.Catalog), so that
-- an agent woken or restored offers its servers' tools, prompts and
-- resources before they answer again. Each list is a JSON array as the
-- agent wrote it, NULL when the server advertises no such list.
CREATE TABLE catalogs (
	namespace          TEXT    NOT NULL,
	server_id          TEXT    NOT NULL,
	tools              TEXT,
	prompts            TEXT,
	resources          TEXT,
	resource_templates TEXT,
	updated_at         INTEGER NOT NULL, -- unix microseconds
	PRIMARY KEY (namespace, server_id)
) STRICT, WITHOUT ROWID;
