-- What each C2SP tlog-witness holds of a log: the tree size it is known
-- to hold, and its latest cosignature line, of the checkpoint of size
-- cosigned. witness is the witness's verifier key.
CREATE TABLE IF NOT EXISTS witness_cosignatures (
  origin    text NOT NULL,
  witness   text NOT NULL,
  size      bigint NOT NULL,
  cosigned  bigint NOT NULL,
  signature text NOT NULL,
  PRIMARY KEY (origin, witness)
);
