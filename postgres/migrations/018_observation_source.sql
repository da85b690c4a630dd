-- An erasure empties the observations that copied the erased body into a
-- session (source memory:<id>, custody.ObservationSourceOf) through this
-- index, in the erasure's transaction.
CREATE INDEX IF NOT EXISTS observations_source ON observations (tenant, source_ref);
