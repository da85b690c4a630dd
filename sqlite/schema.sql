-- custody SQLite schema, version 14 (PRAGMA user_version; see migrate.go).
CREATE TABLE IF NOT EXISTS meta (
  name  TEXT PRIMARY KEY,
  value TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS principals (
  tenant     TEXT NOT NULL,
  name       TEXT NOT NULL,
  roles      TEXT NOT NULL,
  channels   TEXT NOT NULL,
  groups_    TEXT NOT NULL,
  public_key BLOB NOT NULL,
  sealed_key BLOB NOT NULL,
  token_hash BLOB NOT NULL UNIQUE,
  created_at INTEGER NOT NULL,
  -- the index of the principal's latest log entry, which its rights must
  -- match (NULL: none; the server refuses such a principal)
  log_index  INTEGER,
  PRIMARY KEY (tenant, name)
);

CREATE TABLE IF NOT EXISTS records (
  rid            INTEGER PRIMARY KEY,
  id             TEXT NOT NULL UNIQUE,
  tenant         TEXT NOT NULL,
  owner          TEXT NOT NULL,
  namespace      TEXT NOT NULL,
  key            TEXT NOT NULL,
  class          TEXT NOT NULL,
  body           TEXT NOT NULL,
  channel        TEXT NOT NULL,
  writer         TEXT NOT NULL,
  source_ref     TEXT NOT NULL,
  authority      INTEGER NOT NULL,
  audience       TEXT NOT NULL,
  state          TEXT NOT NULL,
  head           INTEGER NOT NULL DEFAULT 0,
  created_at     INTEGER NOT NULL,
  expires_at     INTEGER,
  version        INTEGER NOT NULL,
  log_index      INTEGER NOT NULL,
  policy_version TEXT NOT NULL,
  session        TEXT NOT NULL,
  parents        TEXT NOT NULL,
  erased         INTEGER NOT NULL,
  receipt        TEXT NOT NULL,
  -- salt keys the body's commitment in the log (custody.BodyHash); empty
  -- on records written before schema 9, which keep a plain SHA-256, and
  -- on erased records. It never leaves the store but in a snapshot.
  salt           BLOB NOT NULL DEFAULT x'',
  -- metadata is the write's metadata object as JSON ('' for none; schema
  -- 14): plain data, never a control field, erased with the body.
  metadata       TEXT NOT NULL DEFAULT ''
);
-- records_ns_key serves a key's versions (tenant, namespace, key, owner)
-- and a list by namespace and key, whoever owns the records shared with the
-- subject. It holds keyed records only (schema 8), so a keyless write
-- leaves it alone; every query through it says key != '' so that SQLite
-- may use it. records_waiting serves the review queue, the sweep and
-- re-evaluation: it holds only the states people wait on, so a cascade
-- (admitted to suspended) rewrites no index entry. (Schema 1 had
-- records_key on (tenant, owner, namespace, key, version), which a list by
-- key could not use; (state, tenant, id) for every state; and (tenant,
-- owner, state, id) and (tenant, audience, state, id), which no query
-- used.)
CREATE INDEX IF NOT EXISTS records_ns_key   ON records (tenant, namespace, key, owner, version, head) WHERE key != '';
-- (Its condition is spelled with OR: SQLite evaluated an IN list for the
-- old and the new row of every state change, a third of a cascade's cost.)
CREATE INDEX IF NOT EXISTS records_waiting  ON records (state, tenant, id)
  WHERE state = 'pending' OR state = 'quarantined' OR state = 'pending_confirmation';
-- List walks a subject's own records and each audience it can see, newest
-- first. Neither index holds state, so a cascade does not rewrite them.
-- records_aud_id holds only records shared beyond their owner (schema 7):
-- the owner's walk finds the others, and the most common write, an
-- owner-only record, leaves the index alone (a page fewer per write).
CREATE INDEX IF NOT EXISTS records_owner_id ON records (tenant, owner, id);
CREATE INDEX IF NOT EXISTS records_aud_id   ON records (tenant, audience, id) WHERE audience != 'owner';
-- A hybrid search recalls an episode with the one written next after it
-- by its owner in its namespace (Following, custody's contiguity.go):
-- episodes only (schema 18), so no other write touches it.
CREATE INDEX IF NOT EXISTS records_episodes ON records (tenant, owner, namespace, id) WHERE class = 'episode';

-- head is 1 on the newest admitted version of a key (keyless records: 0),
-- so retrieval reads one column of the row instead of probing the key's
-- other versions for every candidate. The triggers keep it whenever a keyed
-- record is inserted or enters or leaves the admitted state; verify checks
-- it (CheckHeads). records_ns_key holds it after the version (schema 29):
-- a key's head is the first entry with head 1 walking its versions down,
-- almost always the first, read from the index alone. (Schema 2 to 28 kept
-- a partial index of heads, records_head, whose pages were an eighth of
-- every keyed write's.)
-- A keyed admitted record is inserted with head 1 (it is almost always the
-- newest version); the trigger demotes the older head, or the new record
-- when a newer version is in force (a restore inserting out of order).
-- Every statement of the triggers names the key's columns and key != ''
-- so that it seeks through records_ns_key.
-- Triggers are code: every open replaces them with this file's.
DROP TRIGGER IF EXISTS records_head_insert;
CREATE TRIGGER records_head_insert AFTER INSERT ON records
WHEN NEW.head = 1 BEGIN
  UPDATE records SET head = 0 WHERE rid = (SELECT rid FROM records WHERE tenant = NEW.tenant AND namespace = NEW.namespace
    AND key = NEW.key AND owner = NEW.owner AND key != '' AND version < NEW.version AND head = 1 ORDER BY version DESC LIMIT 1);
  UPDATE records SET head = 0 WHERE rid = NEW.rid AND EXISTS (SELECT 1 FROM records n WHERE n.tenant = NEW.tenant
    AND n.namespace = NEW.namespace AND n.key = NEW.key AND n.owner = NEW.owner AND n.key != '' AND n.version >= NEW.version
    AND n.head = 1 AND n.rid != NEW.rid);
END;
DROP TRIGGER IF EXISTS records_head_state;
CREATE TRIGGER records_head_state AFTER UPDATE OF state ON records
WHEN NEW.key != '' AND (OLD.state = 'admitted') != (NEW.state = 'admitted') BEGIN
  UPDATE records SET head = 0 WHERE tenant = NEW.tenant AND namespace = NEW.namespace AND key = NEW.key AND owner = NEW.owner
    AND key != '' AND head = 1;
  UPDATE records SET head = 1 WHERE rid = (SELECT rid FROM records WHERE tenant = NEW.tenant AND namespace = NEW.namespace
    AND key = NEW.key AND owner = NEW.owner AND key != '' AND state = 'admitted' ORDER BY version DESC LIMIT 1);
END;

-- Search: body and key, ranked by bm25. Eligibility (tenant, audience,
-- state, expiry, newest version) is filtered in the same query. Tenant or
-- owner tokens in the MATCH were tried and dropped: bm25 computes document
-- frequencies for every phrase of the query, so a token that matches all of
-- a subject's rows made every search cost O(rows of the subject).
-- Its columns hold the terms of the body and the key (custody_terms,
-- internal/lexical: English stems, no stopwords, identifiers whole),
-- separated by spaces, which is all the tokenizer splits at: the joiners
-- of an identifier are token characters, and Go has already lower-cased
-- the terms (schema 14; before, unicode61 split the raw text).
CREATE VIRTUAL TABLE IF NOT EXISTS records_fts USING fts5(
  body, key, content='', contentless_delete=1,
  tokenize="unicode61 remove_diacritics 0 tokenchars '-_.@+'"
);
-- Gate: normalised body and key (custody.GateIndexText: with markers of
-- the short numbers they hold), trigram-indexed for substring lookups.
-- It keeps which records hold each trigram, not where (detail=none, schema
-- 20: 61% smaller than with positions, and cheaper to merge): a lookup
-- asks for the records holding every trigram of the text, and the gate
-- tests each one's own text for the substring (mentioning.go).
CREATE VIRTUAL TABLE IF NOT EXISTS records_tri USING fts5(
  norm, content='', contentless_delete=1, detail=none, tokenize='trigram'
);
-- An erased body leaves both indexes at once (secure-delete), not at a
-- later merge; the writer's secure_delete pragma zeroes the pages it frees.
INSERT INTO records_fts (records_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO records_tri (records_tri, rank) VALUES ('secure-delete', 1);
-- A write adds its record to neither FTS5 index: it puts the record's
-- normalised text in index_pending, which the gate scans beside records_tri
-- (instr on the same normalised text: the same substring test), and the
-- writer moves the rows into both indexes in one insert each when it is
-- idle, when index_pending has filled, and before a search (pending.go).
-- (Schema 3 and 4 kept only the trigrams pending, in tri_pending.)
CREATE TABLE IF NOT EXISTS index_pending (
  rid  INTEGER PRIMARY KEY,
  norm TEXT NOT NULL
);
-- The writer's idle-time merge steps merge any level with two segments
-- (tidy.go); FTS5's own merging during commits keeps its default of four.
INSERT INTO records_fts (records_fts, rank) VALUES ('usermerge', 2);
INSERT INTO records_tri (records_tri, rank) VALUES ('usermerge', 2);

-- search_generation counts the commits that changed records_fts (schema
-- 19). The store ranks searches with a copy of the index in memory
-- (search_index.go) that knows which generation it holds: a search that
-- finds another generation here, one another connection committed, ranks
-- with FTS5 until the copy is built again.
CREATE TABLE IF NOT EXISTS search_generation (
  id  INTEGER PRIMARY KEY CHECK (id = 1),
  gen INTEGER NOT NULL
);
INSERT OR IGNORE INTO search_generation (id, gen) VALUES (1, 0);

-- search_moved lists the records whose state, head or audience the
-- transaction under way changed (schema 23): its commit moves them to
-- their partition in the copy of the index (search_moves.go), which keeps
-- the records no caller may retrieve apart, out of every search's
-- statistics, and empties the table. It is empty between transactions.
CREATE TABLE IF NOT EXISTS search_moved (rid INTEGER PRIMARY KEY);
DROP TRIGGER IF EXISTS records_search_moved;
CREATE TRIGGER records_search_moved AFTER UPDATE OF state, head, audience ON records
WHEN NOT NEW.erased AND (OLD.state IS NOT NEW.state OR OLD.head IS NOT NEW.head OR OLD.audience IS NOT NEW.audience) BEGIN
  INSERT OR IGNORE INTO search_moved (rid) VALUES (NEW.rid);
END;

-- child_rid is the child's row in records, so a cascade's walk reads each
-- descendant by rowid instead of through the id index (schema 4; a third
-- of the walk). It is set with the edge, in the child's own transaction.
CREATE TABLE IF NOT EXISTS edges (
  tenant    TEXT NOT NULL,
  parent    TEXT NOT NULL,
  child     TEXT NOT NULL,
  weight    REAL NOT NULL,
  child_rid INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (parent, child)
) WITHOUT ROWID;
-- A record's own edges are replaced when its parents change (a rebuild, or
-- any state change, which rewrites the record): without this index every
-- such change read every edge of the store.
CREATE INDEX IF NOT EXISTS edges_child ON edges (child);

CREATE TABLE IF NOT EXISTS tombstones (
  tenant TEXT NOT NULL,
  id     TEXT NOT NULL,
  state  TEXT NOT NULL,
  PRIMARY KEY (tenant, id)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS policies (
  seq        INTEGER PRIMARY KEY,
  tenant     TEXT NOT NULL,
  text       BLOB NOT NULL,
  actor      TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS policies_tenant ON policies (tenant, seq);

CREATE TABLE IF NOT EXISTS sessions (
  id         TEXT PRIMARY KEY,
  tenant     TEXT NOT NULL,
  subject    TEXT NOT NULL,
  opener     TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS observations (
  id         TEXT PRIMARY KEY,
  tenant     TEXT NOT NULL,
  session    TEXT NOT NULL,
  channel    TEXT NOT NULL,
  text       TEXT NOT NULL,
  source_ref TEXT NOT NULL,
  authority  INTEGER NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS observations_session ON observations (tenant, session, id);
-- An erasure empties the observations that copied the erased body into a
-- session (source memory:<id>, custody.ObservationSourceOf), schema 25.
CREATE INDEX IF NOT EXISTS observations_source ON observations (tenant, source_ref);

-- What the subject endorsed a session's source for (schema 21; endorse.go):
-- the actions a value from the source may back. Covered by verify against
-- the endorse entries of the log.
CREATE TABLE IF NOT EXISTS endorsements (
  id         TEXT PRIMARY KEY,
  tenant     TEXT NOT NULL,
  session    TEXT NOT NULL,
  subject    TEXT NOT NULL,
  source_ref TEXT NOT NULL,
  actions    TEXT NOT NULL,
  until      INTEGER,
  created_at INTEGER NOT NULL,
  log_index  INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS endorsements_session ON endorsements (tenant, session, id);

CREATE TABLE IF NOT EXISTS grants (
  id         TEXT PRIMARY KEY,
  tenant     TEXT NOT NULL,
  subject    TEXT NOT NULL,
  digest     TEXT NOT NULL,
  actor      TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  used_at    INTEGER
);
CREATE INDEX IF NOT EXISTS grants_digest ON grants (tenant, subject, digest, used_at);

-- The Merkle logs, one RFC 6962 tree per tenant (schema 13): each
-- tenant's leaves are indexed from 0 in its own log. data is the leaf
-- packed (schema 26, leaf_pack.go: custody_leaf(data) is the leaf), in a
-- table without rowid, so that the key is not kept twice (the table by
-- rowid, and an index of (tenant, idx) to it). nodes (schema 30,
-- log_nodes.go) holds the hashes of the tree nodes the leaf's append
-- completed, level 0 (the leaf's hash) first, 32 bytes each: node
-- (level, i) is in the row of leaf ((i + 1) << level) - 1.
CREATE TABLE IF NOT EXISTS log_leaves (
  tenant TEXT NOT NULL,
  idx    INTEGER NOT NULL,
  data   BLOB NOT NULL,
  nodes  BLOB NOT NULL DEFAULT x'',
  PRIMARY KEY (tenant, idx)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS checkpoints (
  tenant     TEXT NOT NULL,
  size       INTEGER NOT NULL,
  note       BLOB NOT NULL,
  PRIMARY KEY (tenant, size)
);
-- The log all tenants shared up to schema 12, re-sequenced into theirs:
-- the tenant of each of its leaves, in order (the leaf is the next of
-- that tenant's log), and its checkpoints (custody.LegacyLog).
CREATE TABLE IF NOT EXISTS log_legacy (
  idx    INTEGER PRIMARY KEY,
  tenant TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS log_legacy_checkpoints (
  size INTEGER PRIMARY KEY,
  note BLOB NOT NULL
);

-- Pauses of a principal's writes or of a channel (schema 11); until and
-- resumed_at are Unix nanoseconds, NULL for none.
CREATE TABLE IF NOT EXISTS pauses (
  id         TEXT PRIMARY KEY,
  tenant     TEXT NOT NULL,
  writer     TEXT NOT NULL,
  channel    TEXT NOT NULL,
  reason     TEXT NOT NULL,
  by_        TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  until      INTEGER,
  resumed_at INTEGER,
  resumed_by TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS pauses_open ON pauses (tenant, id) WHERE resumed_at IS NULL;

-- What sessions' reads returned (schema 12): one row per record and
-- session, times Unix nanoseconds, via a bit set (1 get, 2 list, 4
-- search); rows last read before the read retention are pruned.
CREATE TABLE IF NOT EXISTS session_reads (
  tenant   TEXT NOT NULL,
  record   TEXT NOT NULL,
  session  TEXT NOT NULL,
  via      INTEGER NOT NULL,
  reads    INTEGER NOT NULL,
  first_at INTEGER NOT NULL,
  last_at  INTEGER NOT NULL,
  PRIMARY KEY (tenant, record, session)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS session_reads_last ON session_reads (last_at);
-- The records each gate decision relied on (schema 12): how is
-- "justification" or "traced"; at is Unix nanoseconds.
CREATE TABLE IF NOT EXISTS gate_refs (
  tenant    TEXT NOT NULL,
  record    TEXT NOT NULL,
  log_index INTEGER NOT NULL,
  how       TEXT NOT NULL,
  action    TEXT NOT NULL,
  decision  TEXT NOT NULL,
  subject   TEXT NOT NULL,
  session   TEXT NOT NULL,
  at        INTEGER NOT NULL,
  PRIMARY KEY (tenant, record, log_index)
) WITHOUT ROWID;
-- What each C2SP tlog-witness holds of a log (schema 17): the tree size
-- it is known to hold, and its latest cosignature line, of the checkpoint
-- of size cosigned. witness is the witness's verifier key.
CREATE TABLE IF NOT EXISTS witness_cosignatures (
  origin    TEXT NOT NULL,
  witness   TEXT NOT NULL,
  size      INTEGER NOT NULL,
  cosigned  INTEGER NOT NULL,
  signature TEXT NOT NULL,
  PRIMARY KEY (origin, witness)
);
-- The newest checkpoint of each log that met the witness policy, with the
-- cosignatures that met it (schema 24): what is served as the log's
-- current checkpoint when the server has a policy.
CREATE TABLE IF NOT EXISTS published_checkpoints (
  origin TEXT PRIMARY KEY,
  size   INTEGER NOT NULL,
  note   BLOB NOT NULL
);
-- The principals version (schema 16): one number, changed by the same
-- transaction as any change to a principal's row, by custody or anyone
-- else. A server keeps the principals it has authenticated for as long
-- as the version stays what it was when it read them (auth_cache.go).
CREATE TABLE IF NOT EXISTS principals_version (
  id INTEGER PRIMARY KEY CHECK (id = 0),
  n  INTEGER NOT NULL
);
INSERT OR IGNORE INTO principals_version (id, n) VALUES (0, 0);
DROP TRIGGER IF EXISTS principals_version_insert;
CREATE TRIGGER principals_version_insert AFTER INSERT ON principals
BEGIN UPDATE principals_version SET n = n + 1 WHERE id = 0; END;
DROP TRIGGER IF EXISTS principals_version_update;
CREATE TRIGGER principals_version_update AFTER UPDATE ON principals
BEGIN UPDATE principals_version SET n = n + 1 WHERE id = 0; END;
DROP TRIGGER IF EXISTS principals_version_delete;
CREATE TRIGGER principals_version_delete AFTER DELETE ON principals
BEGIN UPDATE principals_version SET n = n + 1 WHERE id = 0; END;
