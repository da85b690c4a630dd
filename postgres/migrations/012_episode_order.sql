-- A hybrid search recalls an episode with the one written next after it
-- by its owner in its namespace (Following, custody's contiguity.go):
-- episodes only, so no other write touches the index.
CREATE INDEX IF NOT EXISTS records_episodes ON records (tenant, owner, namespace, id) WHERE class = 'episode';
