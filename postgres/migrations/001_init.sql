-- custody PostgreSQL schema, migration 001: the initial tables.
--
-- Times are Unix nanoseconds (bigint), so that they round-trip exactly: the
-- log signs RFC 3339 times with nanoseconds, and verify compares them.
-- Record ids are ULIDs compared byte-wise (COLLATE "C"), which is the order
-- of their creation.

CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE principals (
  tenant     text     NOT NULL,
  name       text     NOT NULL,
  roles      text[]   NOT NULL,
  channels   text[]   NOT NULL,
  groups_    text[]   NOT NULL,
  public_key bytea    NOT NULL,
  sealed_key bytea    NOT NULL,
  token_hash bytea    NOT NULL UNIQUE,
  created_at bigint   NOT NULL,
  PRIMARY KEY (tenant, name)
);

CREATE TABLE records (
  id             text COLLATE "C" PRIMARY KEY,
  tenant         text     NOT NULL,
  owner          text     NOT NULL,
  namespace      text     NOT NULL,
  key            text     NOT NULL,
  class          text     NOT NULL,
  body           text     NOT NULL,
  channel        text     NOT NULL,
  writer         text     NOT NULL,
  source_ref     text     NOT NULL,
  authority      smallint NOT NULL,
  audience       text     NOT NULL,
  state          text     NOT NULL,
  created_at     bigint   NOT NULL,
  expires_at     bigint,
  version        integer  NOT NULL,
  log_index      bigint   NOT NULL,
  policy_version text     NOT NULL,
  session        text     NOT NULL,
  parents        text     NOT NULL, -- JSON
  erased         boolean  NOT NULL,
  receipt        text     NOT NULL, -- JSON (text, not jsonb: a reason may hold any character)
  -- Search: the words of body and key (extracted and lower-cased by the
  -- store, so that documents and queries are tokenised alike).
  search         tsvector NOT NULL,
  -- Gate: normalised body and key (custody.NormalizeValue), for substring
  -- lookups through the trigram index.
  norm           text     NOT NULL
);
CREATE INDEX records_key    ON records (tenant, owner, namespace, key, version);
CREATE INDEX records_owner  ON records (tenant, owner, state, id);
CREATE INDEX records_aud    ON records (tenant, audience, state, id);
CREATE INDEX records_state  ON records (state, tenant, id);
-- The search index has fastupdate off: entries go straight into the index
-- rather than into a pending list that every search scans until the next
-- vacuum. The trigram index (many entries per record, read only by the
-- gate) keeps the pending list, bounded to 512 kB.
CREATE INDEX records_search ON records USING gin (search) WITH (fastupdate = off);
CREATE INDEX records_norm   ON records USING gin (norm gin_trgm_ops) WITH (gin_pending_list_limit = 512);

CREATE TABLE edges (
  tenant text             NOT NULL,
  parent text COLLATE "C" NOT NULL,
  child  text COLLATE "C" NOT NULL,
  weight double precision NOT NULL,
  PRIMARY KEY (parent, child)
);
CREATE INDEX edges_child ON edges (child);

CREATE TABLE tombstones (
  tenant text NOT NULL,
  id     text COLLATE "C" NOT NULL,
  state  text NOT NULL,
  PRIMARY KEY (tenant, id)
);

CREATE TABLE policies (
  seq        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  tenant     text   NOT NULL,
  text       bytea  NOT NULL,
  actor      text   NOT NULL,
  created_at bigint NOT NULL
);
CREATE INDEX policies_tenant ON policies (tenant, seq);

CREATE TABLE sessions (
  id         text COLLATE "C" PRIMARY KEY,
  tenant     text   NOT NULL,
  subject    text   NOT NULL,
  opener     text   NOT NULL,
  created_at bigint NOT NULL
);

CREATE TABLE observations (
  id         text COLLATE "C" PRIMARY KEY,
  tenant     text     NOT NULL,
  session    text COLLATE "C" NOT NULL,
  channel    text     NOT NULL,
  text       text     NOT NULL,
  source_ref text     NOT NULL,
  authority  smallint NOT NULL,
  created_at bigint   NOT NULL
);
CREATE INDEX observations_session ON observations (tenant, session, id);

CREATE TABLE grants (
  id         text COLLATE "C" PRIMARY KEY,
  tenant     text   NOT NULL,
  subject    text   NOT NULL,
  digest     text   NOT NULL,
  actor      text   NOT NULL,
  created_at bigint NOT NULL,
  used_at    bigint
);
CREATE INDEX grants_digest ON grants (tenant, subject, digest) WHERE used_at IS NULL;

-- The Merkle log: leaves and the hashes of the perfect subtrees (package
-- tlog). Appenders serialise on an advisory lock, so idx is contiguous.
CREATE TABLE log_leaves (
  idx    bigint PRIMARY KEY CHECK (idx >= 0),
  tenant text   NOT NULL,
  data   bytea  NOT NULL
);
CREATE TABLE log_nodes (
  level integer NOT NULL,
  idx   bigint  NOT NULL,
  hash  bytea   NOT NULL,
  PRIMARY KEY (level, idx)
);
CREATE TABLE checkpoints (
  size bigint PRIMARY KEY,
  note bytea  NOT NULL
);
