-- The gate's norm column holds custody.RecordGateIndex: the canonical
-- forms of package canon (folded letters and digits of every field: body,
-- key, namespace, source and metadata values), then a marker for every
-- amount and e-mail address the fields mention, however written. The
-- migration's Go step (renormRecords, records.go) writes every live
-- record's anew.
--
-- endorsements: what the subject endorsed a session's source for
-- (endorse.go); covered by verify against the endorse entries of the log.
CREATE TABLE IF NOT EXISTS endorsements (
  id         text COLLATE "C" PRIMARY KEY,
  tenant     text   NOT NULL,
  session    text COLLATE "C" NOT NULL,
  subject    text   NOT NULL,
  source_ref text   NOT NULL,
  actions    text   NOT NULL,
  until      bigint,
  created_at bigint NOT NULL,
  log_index  bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS endorsements_session ON endorsements (tenant, session, id);
