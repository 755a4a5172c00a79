-- Agents' approvals (store.Approval): tool calls a policy asks a person
-- to approve, stored before anything is sent.
CREATE TABLE approvals (
	namespace  TEXT    NOT NULL,
	id         TEXT    NOT NULL,
	state      TEXT    NOT NULL, -- pending, approved, denied, expired, done
	record     TEXT    NOT NULL, -- store.Approval, as JSON
	seq        INTEGER NOT NULL, -- insertion order
	updated_at INTEGER NOT NULL, -- unix microseconds
	PRIMARY KEY (namespace, id)
) STRICT, WITHOUT ROWID;
