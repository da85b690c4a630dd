-- A record whose body is a JSON object or array is searched by its
-- values (lexical.Values): its search vector holds the terms of its
-- strings and numbers, not of its keys. The migration's Go step
-- (researchStructured, terms.go) writes those records' vectors anew.
SELECT 1;
