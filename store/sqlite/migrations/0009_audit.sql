-- Agents' audit logs (store.AuditRecord): one row per call, decision,
-- pin decision or server change, appended in batches. seq numbers an
-- agent's records in the order they were appended (its last seq plus one,
-- given in the appending transaction): the log's order and its cursor.
-- One b-tree, clustered by agent and seq: an append writes nothing else,
-- and a page of the log is a range. arguments, when kept, are sealed by
-- the store's cipher (never stored without a key).
CREATE TABLE audit (
	namespace TEXT    NOT NULL,
	seq       INTEGER NOT NULL,
	at        INTEGER NOT NULL, -- unix microseconds
	server_id TEXT    NOT NULL,
	tool      TEXT    NOT NULL,
	decision  TEXT    NOT NULL,
	record    TEXT    NOT NULL, -- the other fields, as JSON
	arguments BLOB,             -- sealed; NULL when not kept
	PRIMARY KEY (namespace, seq)
) STRICT, WITHOUT ROWID;

-- The last seq given to each agent's records, kept when pruning deletes
-- them all, so that a seq (a follower's cursor) is never given twice.
CREATE TABLE audit_seq (
	namespace TEXT    NOT NULL PRIMARY KEY,
	last      INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
