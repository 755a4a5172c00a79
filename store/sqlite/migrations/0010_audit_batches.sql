-- Agents' audit logs as one row per appended batch per agent rather than
-- one per record: SQLite's work of a row (its b-tree insert and its part
-- of the commit) is paid once a batch. A row holds an agent's records of
-- seqs first through last (seq order; pruning by age may leave gaps), n
-- of them, their times within [min_at, max_at], so that a page of the
-- log, and pruning by count and by age, pick rows without decoding
-- them. records is the batch's encoding (store/internal/codec
-- AppendAuditBatch: each record's seq, time, server_id, tool, decision,
-- record JSON and sealed arguments, sealed as before). A rowid table:
-- its rows are large (about 200 bytes a record).
CREATE TABLE audit_batch (
	namespace TEXT    NOT NULL,
	first     INTEGER NOT NULL,
	last      INTEGER NOT NULL,
	n         INTEGER NOT NULL,
	min_at    INTEGER NOT NULL, -- unix microseconds
	max_at    INTEGER NOT NULL,
	records   BLOB    NOT NULL
) STRICT;

CREATE UNIQUE INDEX audit_batch_seq ON audit_batch (namespace, first);

-- Each record of the former table becomes a batch of one, in the
-- codec's one-record JSON form, its arguments still sealed as they were.
INSERT INTO audit_batch (namespace, first, last, n, min_at, max_at, records)
SELECT namespace, seq, seq, 1, at, at,
	CAST(json_array(seq, at, server_id, tool, decision, record, hex(arguments)) AS BLOB)
FROM audit ORDER BY namespace, seq;

DROP TABLE audit;
