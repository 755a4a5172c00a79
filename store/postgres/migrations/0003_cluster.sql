-- Replicas of agentmcp serve sharing this database, and the lease of each
-- agent (see lease.go). Both are ordinary, logged tables: an unlogged table
-- is emptied by crash recovery and absent on a promoted standby, which would
-- make every agent look unowned while its old owner still runs.

-- Fencing tokens, never reused: every claim of any agent takes the next one.
-- A sequence keeps them increasing even when rows are deleted.
CREATE SEQUENCE agentmcp_lease_epoch;

-- One row per running replica (per process start: ids are never reused, so
-- a restarted process never inherits its predecessor's leases). A replica is
-- live while expires_at, set from the database clock, is in the future.
CREATE TABLE agentmcp_replicas (
	id           TEXT        PRIMARY KEY,
	cluster_url  TEXT        NOT NULL,                  -- its internal listener
	version      TEXT        NOT NULL,                  -- build, for mixed-version deploys
	state        TEXT        NOT NULL DEFAULT 'live'
	             CHECK (state IN ('live', 'draining')),
	awake_agents INTEGER     NOT NULL DEFAULT 0,        -- load report, for placement
	started_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
	heartbeat_at TIMESTAMPTZ NOT NULL DEFAULT now(),
	expires_at   TIMESTAMPTZ NOT NULL,
	-- Set by the first claim that takes a lease from the replica after its
	-- row expired; a fenced row is never renewed.
	fenced_at    TIMESTAMPTZ
);

-- One row per agent ever claimed. The lease is valid while owner names a
-- replica whose row is live; owner NULL means hibernated (released). epoch
-- is the fencing token of the current (or last) ownership. Rows are updated
-- often: fillfactor leaves room for HOT updates.
CREATE TABLE agentmcp_agents (
	namespace   TEXT        PRIMARY KEY,
	owner       TEXT,
	epoch       BIGINT      NOT NULL,
	claimed_at  TIMESTAMPTZ,
	released_at TIMESTAMPTZ
) WITH (fillfactor = 70);

-- The leases of one replica (drain, release on exit, re-validation).
CREATE INDEX agentmcp_agents_owner ON agentmcp_agents (owner) WHERE owner IS NOT NULL;
