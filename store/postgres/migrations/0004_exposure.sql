-- Each agent's exposure rules (store.Exposure): which of its servers and
-- tools its MCP endpoint exposes, as JSON. No row means everything.
CREATE TABLE agentmcp_exposure (
	namespace  TEXT        PRIMARY KEY,
	rules      JSONB       NOT NULL, -- store.Exposure
	updated_at TIMESTAMPTZ NOT NULL
);
