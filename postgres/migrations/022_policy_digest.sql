-- A write applied in one round trip checks that its tenant's policy is
-- the one it decided under (postgres/ahead.go). It compared the SHA-256
-- of the newest policy's text, computed on every write: the text is a few
-- kilobytes, kept compressed out of line, so each write read, inflated
-- and hashed it. The digest is now stored with the policy when it is
-- written.
ALTER TABLE policies ADD COLUMN IF NOT EXISTS digest bytea GENERATED ALWAYS AS (sha256(text)) STORED;
