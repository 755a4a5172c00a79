-- Agents' tasks (store.Task): tool calls that run as MCP tasks, stored
-- before they are first polled so that polling resumes after a restart.
CREATE TABLE agentmcp_tasks (
	namespace  TEXT        NOT NULL,
	server_id  TEXT        NOT NULL,
	task_id    TEXT        NOT NULL,
	record     TEXT        NOT NULL, -- the other fields of store.Task, as JSON (kept as written)
	seq        BIGSERIAL,            -- insertion order
	created_at TIMESTAMPTZ NOT NULL,
	updated_at TIMESTAMPTZ NOT NULL,
	PRIMARY KEY (namespace, server_id, task_id)
);
