-- Search vectors are built in Go from the terms of internal/lexical
-- (English stems, no stopwords, identifiers whole) and cast to tsvector;
-- the migration's Go step (researchVectors, terms.go) rebuilds every
-- record's. Each record keeps the metadata object of its write, as JSON
-- ('' for none): plain data, never a control field, erased with the body.
ALTER TABLE records ADD COLUMN IF NOT EXISTS metadata text NOT NULL DEFAULT '';
