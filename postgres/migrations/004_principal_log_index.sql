-- Each principal keeps the index of its latest log entry, which its rights
-- must match (NULL: none; the server refuses such a principal). The
-- principals of an existing database are pointed at their entries by the
-- Go step of this migration (linkPrincipals in principals.go).
ALTER TABLE principals ADD COLUMN log_index bigint;
