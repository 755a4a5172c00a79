-- Agents' tool policies (package policy): one JSON document per agent.
CREATE TABLE agentmcp_policies (
	namespace  TEXT        NOT NULL PRIMARY KEY,
	doc        TEXT        NOT NULL, -- the policy, as JSON
	updated_at TIMESTAMPTZ NOT NULL
);
