-- keep_awake marks a server whose agent is woken when the program starts and
-- never hibernated (store.Server.KeepAwake). Existing rows are not; with a
-- constant default the column is added without rewriting the table.
ALTER TABLE agentmcp_servers ADD COLUMN keep_awake BOOLEAN NOT NULL DEFAULT false;

-- The few keep-awake rows among many, for ListKeepAwake.
CREATE INDEX agentmcp_servers_keep_awake ON agentmcp_servers (namespace) WHERE keep_awake;
