-- Records' vectors for semantic search (vectors.go): one per record, of the
-- model that made it (embed.Quantize encoding), deleted with the record and
-- when its body is erased, by the trigger, in the erasure's transaction.
CREATE TABLE IF NOT EXISTS vectors (
  id    text COLLATE "C" PRIMARY KEY REFERENCES records (id) ON DELETE CASCADE,
  model text NOT NULL,
  dim   integer NOT NULL,
  vec   bytea NOT NULL
);
CREATE OR REPLACE FUNCTION vectors_erase() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM vectors WHERE id = NEW.id;
  RETURN NEW;
END $$;
DROP TRIGGER IF EXISTS vectors_erase ON records;
CREATE TRIGGER vectors_erase AFTER UPDATE OF erased ON records
  FOR EACH ROW WHEN (NEW.erased AND NOT OLD.erased) EXECUTE FUNCTION vectors_erase();
