-- The gate's norm column holds custody.GateIndexText: the normalised body
-- and key, then the marker of each number of one or two digits before the
-- point ("_10_"), which a gate lookup of such an amount asks for through
-- the trigram index instead of reading every record of its subject. The
-- migration's Go step (renormRecords, records.go) writes every live
-- record's anew.
SELECT 1;
