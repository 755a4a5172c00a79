-- Agents' tool policies (package policy): one JSON document per agent.
CREATE TABLE policies (
	namespace  TEXT    NOT NULL PRIMARY KEY,
	doc        TEXT    NOT NULL, -- the policy, as JSON
	updated_at INTEGER NOT NULL  -- unix microseconds
) STRICT, WITHOUT ROWID;
