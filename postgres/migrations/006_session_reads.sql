-- What sessions' reads returned: one row per record and session, times
-- Unix nanoseconds, via a bit set (1 get, 2 list, 4 search); rows last
-- read before the read retention are pruned.
CREATE TABLE IF NOT EXISTS session_reads (
  tenant   text NOT NULL,
  record   text NOT NULL,
  session  text NOT NULL,
  via      integer NOT NULL,
  reads    bigint NOT NULL,
  first_at bigint NOT NULL,
  last_at  bigint NOT NULL,
  PRIMARY KEY (tenant, record, session)
);
CREATE INDEX IF NOT EXISTS session_reads_last ON session_reads (last_at);
-- The records each gate decision relied on: how is "justification" or
-- "traced"; at is Unix nanoseconds.
CREATE TABLE IF NOT EXISTS gate_refs (
  tenant    text NOT NULL,
  record    text NOT NULL,
  log_index bigint NOT NULL,
  how       text NOT NULL,
  action    text NOT NULL,
  decision  text NOT NULL,
  subject   text NOT NULL,
  session   text NOT NULL,
  at        bigint NOT NULL,
  PRIMARY KEY (tenant, record, log_index)
);
