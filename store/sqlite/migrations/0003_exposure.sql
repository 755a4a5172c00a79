-- Each agent's exposure rules (store.Exposure): which of its servers and
-- tools its MCP endpoint exposes, as JSON. No row means everything.
CREATE TABLE exposure (
	namespace  TEXT    PRIMARY KEY,
	rules      TEXT    NOT NULL, -- store.Exposure as JSON
	updated_at INTEGER NOT NULL  -- unix microseconds
) STRICT, WITHOUT ROWID;
