-- A list by namespace and key reads that key's versions, whoever owns the
-- records shared with the subject: the owner-first key index could not
-- serve it, since eligibility ORs the owner with the audience. The new
-- order serves a key's versions (tenant, namespace, key, owner) as well.
CREATE INDEX records_ns_key ON records (tenant, namespace, key, owner, version);
DROP INDEX records_key;
