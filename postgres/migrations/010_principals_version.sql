-- The principals version: one number, changed by the same transaction as
-- any change to a principal's row, by custody or anyone else. A server
-- keeps the principals it has authenticated for as long as the version
-- stays what it was when it read them (auth_cache.go).
CREATE TABLE IF NOT EXISTS principals_version (
  id integer PRIMARY KEY CHECK (id = 0),
  n  bigint NOT NULL
);
INSERT INTO principals_version (id, n) VALUES (0, 0) ON CONFLICT DO NOTHING;
CREATE OR REPLACE FUNCTION principals_version_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE principals_version SET n = n + 1 WHERE id = 0;
  RETURN NULL;
END
$$;
DROP TRIGGER IF EXISTS principals_version_change ON principals;
CREATE TRIGGER principals_version_change AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON principals
  FOR EACH STATEMENT EXECUTE FUNCTION principals_version_bump();
