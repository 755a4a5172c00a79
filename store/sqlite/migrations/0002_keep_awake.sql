-- keep_awake marks a server whose agent is woken when the program starts and
-- never hibernated (store.Server.KeepAwake). Existing rows are not.
ALTER TABLE servers ADD COLUMN keep_awake INTEGER NOT NULL DEFAULT 0 CHECK (keep_awake IN (0, 1));

-- The few keep-awake rows among many, for ListKeepAwake.
CREATE INDEX servers_keep_awake ON servers (namespace) WHERE keep_awake;
