-- Agents' approvals (store.Approval): tool calls a policy asks a person
-- to approve, stored before anything is sent.
CREATE TABLE agentmcp_approvals (
	namespace  TEXT        NOT NULL,
	id         TEXT        NOT NULL,
	state      TEXT        NOT NULL, -- pending, approved, denied, expired, done
	record     TEXT        NOT NULL, -- store.Approval, as JSON
	seq        BIGSERIAL,
	updated_at TIMESTAMPTZ NOT NULL,
	PRIMARY KEY (namespace, id)
);
