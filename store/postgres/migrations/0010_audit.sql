-- Agents' audit logs (store.AuditRecord): one row per call, decision,
-- pin decision or server change, appended in batches by whichever
-- replica made the call. seq is the log's order and its cursor;
-- arguments, when kept, are sealed by the store's cipher (never stored
-- without a key).
CREATE TABLE agentmcp_audit (
	seq       BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	namespace TEXT        NOT NULL,
	at        TIMESTAMPTZ NOT NULL,
	server_id TEXT        NOT NULL,
	tool      TEXT        NOT NULL,
	decision  TEXT        NOT NULL,
	record    TEXT        NOT NULL, -- the other fields, as JSON
	arguments BYTEA                 -- sealed; NULL when not kept
);
CREATE INDEX agentmcp_audit_namespace_seq ON agentmcp_audit (namespace, seq);
CREATE INDEX agentmcp_audit_namespace_at ON agentmcp_audit (namespace, at);
