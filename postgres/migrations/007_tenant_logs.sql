-- One Merkle log per tenant. The log all tenants shared is re-sequenced:
-- each tenant's leaves, in their old order and unchanged, become that
-- tenant's log from index 0; log_legacy keeps the tenant of each old
-- index, so that the old log is rebuilt from the tenants' logs and its
-- checkpoints (now log_legacy_checkpoints) still verify. The Go step of
-- this migration (tenantlog.go) moves every stored log index to its new
-- index and computes each tenant's tree nodes.
ALTER TABLE log_leaves RENAME TO log_leaves_6;
ALTER INDEX log_leaves_pkey RENAME TO log_leaves_6_pkey;
DROP TABLE log_nodes;
ALTER TABLE checkpoints RENAME TO log_legacy_checkpoints;
ALTER INDEX checkpoints_pkey RENAME TO log_legacy_checkpoints_pkey;

CREATE TABLE log_leaves (
  tenant text   NOT NULL,
  idx    bigint NOT NULL CHECK (idx >= 0),
  data   bytea  NOT NULL,
  PRIMARY KEY (tenant, idx)
);
CREATE TABLE log_nodes (
  tenant text    NOT NULL,
  level  integer NOT NULL,
  idx    bigint  NOT NULL,
  hash   bytea   NOT NULL,
  PRIMARY KEY (tenant, level, idx)
);
CREATE TABLE checkpoints (
  tenant text   NOT NULL,
  size   bigint NOT NULL,
  note   bytea  NOT NULL,
  PRIMARY KEY (tenant, size)
);
CREATE TABLE log_legacy (
  idx    bigint PRIMARY KEY,
  tenant text   NOT NULL
);
INSERT INTO log_legacy (idx, tenant) SELECT idx, tenant FROM log_leaves_6;

CREATE TEMP TABLE log_remap ON COMMIT DROP AS
  SELECT idx AS old, row_number() OVER (PARTITION BY tenant ORDER BY idx) - 1 AS new FROM log_leaves_6;
ALTER TABLE log_remap ADD PRIMARY KEY (old);
INSERT INTO log_leaves (tenant, idx, data)
  SELECT l.tenant, m.new, l.data FROM log_leaves_6 l JOIN log_remap m ON m.old = l.idx;
UPDATE records r SET log_index = m.new FROM log_remap m WHERE m.old = r.log_index;
UPDATE principals p SET log_index = m.new FROM log_remap m WHERE m.old = p.log_index;
DROP TABLE log_leaves_6;

-- The store's own settings, such as its log name (custody.MetaLogName).
CREATE TABLE IF NOT EXISTS meta (
  name  text PRIMARY KEY,
  value text NOT NULL
);
