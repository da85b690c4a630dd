-- The newest checkpoint of each log that met the witness policy, with the
-- cosignatures that met it: what is served as the log's current
-- checkpoint when the server has a policy.
CREATE TABLE IF NOT EXISTS published_checkpoints (
  origin text PRIMARY KEY,
  size   bigint NOT NULL,
  note   bytea NOT NULL
);
