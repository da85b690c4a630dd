-- Pauses of a principal's writes or of a channel; until and resumed_at
-- are Unix nanoseconds, NULL for none.
CREATE TABLE IF NOT EXISTS pauses (
  id         text PRIMARY KEY,
  tenant     text NOT NULL,
  writer     text NOT NULL,
  channel    text NOT NULL,
  reason     text NOT NULL,
  by_        text NOT NULL,
  created_at bigint NOT NULL,
  until      bigint,
  resumed_at bigint,
  resumed_by text NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS pauses_open ON pauses (tenant, id) WHERE resumed_at IS NULL;
