-- A record's search vector holds the terms of its folded text
-- (internal/lexical's fold, package canon's Fold): fullwidth letters,
-- other digit sets, HTML references, zero-width and bidi characters and
-- non-breaking hyphens give the terms of the plain text. The migration's
-- Go step (researchVectors, terms.go) writes every record's vector anew.
SELECT 1;
