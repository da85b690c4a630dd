-- Each record's body is committed to in the log by HMAC-SHA256 keyed with
-- a random per-record salt kept here, never in the log (custody.BodyHash),
-- so a short body cannot be guessed from the log. Records written before
-- this migration keep an empty salt and their plain SHA-256; an erased
-- record loses its salt with its body.
ALTER TABLE records ADD COLUMN salt bytea NOT NULL DEFAULT ''::bytea;
