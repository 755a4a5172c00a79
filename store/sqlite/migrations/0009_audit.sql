-- Agents' audit logs (store.AuditRecord): one row per call, decision,
-- pin decision or server change, appended in batches. seq is the log's
-- order and its cursor; arguments, when kept, are sealed by the store's
-- cipher (never stored without a key).
CREATE TABLE audit (
	seq       INTEGER PRIMARY KEY AUTOINCREMENT,
	namespace TEXT    NOT NULL,
	at        INTEGER NOT NULL, -- unix microseconds
	server_id TEXT    NOT NULL,
	tool      TEXT    NOT NULL,
	decision  TEXT    NOT NULL,
	record    TEXT    NOT NULL, -- the other fields, as JSON
	arguments BLOB              -- sealed; NULL when not kept
) STRICT;
CREATE INDEX audit_namespace_seq ON audit (namespace, seq);
CREATE INDEX audit_namespace_at ON audit (namespace, at);
