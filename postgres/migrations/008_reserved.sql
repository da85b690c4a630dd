-- No schema change.
SELECT 1;
