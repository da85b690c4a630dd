package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"time"
)

// schemaVersion is the PRAGMA user_version of the schema in schema.sql.
// Version 1 databases (user_version 0, records without head, the key index
// in another column order, two unused indexes) are migrated in place at
// open. Version 3 added tri_pending and spelled records_waiting's
// condition without IN; a version 2 database gains tri_pending empty,
// and an older custody refuses a version 3 one, whose gate would miss the
// pending rows. Version 4 added edges.child_rid, filled in from records.
// Version 5 keeps records pending for the search index too, in
// index_pending: a version 4 database's pending trigrams (whose records
// are already in the search index) move into records_tri, and tri_pending
// goes.
// Version 6 keys log_nodes by the append that completed each node (see
// schema.sql); the table is rebuilt. Version 7 leaves owner-only records
// out of records_aud_id, which is built again. Version 8 leaves keyless
// records out of records_ns_key, which is built again. Version 9 adds
// records.salt, the key of each record's body commitment in the log;
// older records gain an empty salt and keep their plain SHA-256. Version 10
// keeps with each principal the index of its latest log entry (log_index),
// found in the log for the principals of an older database (linkPrincipals).
// Version 11 adds the pauses table (empty in an older database).
// Version 12 adds session_reads and gate_refs (empty in an older database:
// its sessions' reads and its gate decisions were not recorded).
// Version 13 gives each tenant its own log, re-sequencing the shared one
// (tenantlog.go).
// Version 14 fills records_fts with the terms of internal/lexical (English
// stems, no stopwords, identifiers whole) under a tokenizer that splits at
// spaces only: the old table is dropped, and every live record that is not
// waiting in index_pending is indexed again (reindexFTS); it also adds
// records.metadata (empty for older records).
// Version 15 adds the vectors table (vectors.go), empty in an older
// database until the embedding worker fills it.
// Version 16 adds principals_version and the triggers that change it with
// every change to a principal (auth_cache.go); an older database gains it
// at 0.
// Version 17 adds witness_cosignatures (empty in an older database).
// Version 18 adds records_episodes (schema.sql builds it in an older
// database).
// Version 19 adds search_generation (schema.sql creates it at 0 in an
// older database); an older custody, which would change the search index
// without counting, refuses a version 19 one.
// Version 20 keeps records_tri without positions (detail=none) and indexes
// each record's custody.GateIndexText there and in index_pending (the
// gate text, then the markers of its short numbers): the table is dropped
// and every live record is indexed again (reindexTri); an older custody,
// whose gate would ask it for phrases, refuses a version 20 one.
// Version 21 indexes each record's canonical gate text
// (custody.RecordGateIndex: the canonical forms of package canon, over
// body, key, namespace, source and metadata, with markers of every amount
// and e-mail address): records_tri is dropped and every live record
// indexed again, as for version 20; it adds the endorsements table. An
// older custody, whose gate would look values up in their old form,
// refuses a version 21 one.
// Version 23 adds search_moved and its trigger (search_moves.go): an older
// custody, which would change a record's state without moving it in the
// copy of the search index, refuses a version 23 one. It also indexes
// again each record whose body is a JSON object or array, by its values
// (internal/lexical.Values: its keys are no longer terms).
// Version 24 adds published_checkpoints (empty in an older database: a
// server with a witness policy publishes again once its witnesses cosign).
// Version 25 adds observations_source (schema.sql builds it in an older
// database): an erasure empties the observations that copied the erased
// body (source memory:<id>) through it; an older custody, which would
// leave those copies behind, refuses a version 25 one.
// Version 26 stores log leaves packed (leaf_pack.go) in a table without
// rowid: an older database's log_leaves is copied, packed, into the new
// table (packLeaves). Its records keep a policy version as its 32 bytes
// and leave out of a receipt an admission's reason, the inputs
// overwrite and sensitive when they are false and roles when it is user,
// and write "*" for every field left out (receipt.go); older rows
// keep theirs and read as before. An older custody, which would read a
// packed leaf as the leaf and such a receipt without its reason, refuses
// a version 26 one.
// Version 27 deletes the stored vectors of the built-in and glove
// embedders (models builtin-… and glove-…): they are static
// (embed.Static), their semantic list scores the candidates' texts, and
// no worker stores them any more. Vectors of other models stay.
// Version 28 fills records_fts with the terms of folded text
// (internal/lexical's fold, package canon's Fold: fullwidth letters,
// other digit sets, HTML references, zero-width and bidi characters and
// non-breaking hyphens give the terms of the plain text): the table is
// dropped and every live record indexed again, as for version 14. An
// older custody, whose queries would look for the old terms, refuses a
// version 28 one.
// Version 29 keeps each record's head flag in records_ns_key, after the
// version, and drops records_head: records_ns_key is built again
// (schema.sql), and the triggers seek the key's versions there. An older
// custody refuses a version 29 database: it would build records_head
// again beside it, and keep both up to date.
// Version 30 keeps the log's tree nodes in their leaves' rows
// (log_leaves.nodes, log_nodes.go) and drops log_nodes, whose nodes move
// there. An older custody refuses a version 30 one: its appends would
// write the nodes where no proof reads them.
const schemaVersion = 30

// migrate brings the database at w to schemaVersion in one transaction.
func migrate(ctx context.Context, w *sql.DB) error {
	tx, err := w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var v, hasRecords, hasHead, hasEdges, hasChildRid, hasTriPending, hasNodeIdx, hasSalt, hasPrincipals, hasLogIndex, sharedLog int
	if err := tx.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil {
		return err
	}
	if v > schemaVersion {
		return fmt.Errorf("the database has schema version %d; this custody knows up to %d (upgrade custody)", v, schemaVersion)
	}
	err = tx.QueryRowContext(ctx, `SELECT
 (SELECT COUNT(*) FROM sqlite_schema WHERE type = 'table' AND name = 'records'),
 (SELECT COUNT(*) FROM pragma_table_info('records') WHERE name = 'head'),
 (SELECT COUNT(*) FROM sqlite_schema WHERE type = 'table' AND name = 'edges'),
 (SELECT COUNT(*) FROM pragma_table_info('edges') WHERE name = 'child_rid'),
 (SELECT COUNT(*) FROM sqlite_schema WHERE type = 'table' AND name = 'tri_pending'),
 (SELECT COUNT(*) FROM pragma_table_info('log_nodes') WHERE name = 'idx'),
 (SELECT COUNT(*) FROM pragma_table_info('records') WHERE name = 'salt'),
 (SELECT COUNT(*) FROM sqlite_schema WHERE type = 'table' AND name = 'principals'),
 (SELECT COUNT(*) FROM pragma_table_info('principals') WHERE name = 'log_index'),
 (SELECT COUNT(*) FROM pragma_table_info('log_leaves') WHERE name = 'tenant' AND pk = 0)`).Scan(&hasRecords, &hasHead, &hasEdges, &hasChildRid, &hasTriPending, &hasNodeIdx, &hasSalt, &hasPrincipals, &hasLogIndex, &sharedLog)
	if err != nil {
		return err
	}
	if hasRecords == 1 && hasHead == 0 {
		if _, err := tx.ExecContext(ctx, `ALTER TABLE records ADD COLUMN head INTEGER NOT NULL DEFAULT 0;
UPDATE records SET head = 1 WHERE `+isHead("records")); err != nil {
			return fmt.Errorf("migrating to schema 2: %w", err)
		}
	}
	if hasRecords == 1 && hasSalt == 0 {
		if _, err := tx.ExecContext(ctx, `ALTER TABLE records ADD COLUMN salt BLOB NOT NULL DEFAULT x''`); err != nil {
			return fmt.Errorf("migrating to schema 9: %w", err)
		}
	}
	if v < 2 {
		if _, err := tx.ExecContext(ctx, `DROP INDEX IF EXISTS records_owner; DROP INDEX IF EXISTS records_aud; DROP INDEX IF EXISTS records_key;
DROP INDEX IF EXISTS records_state`); err != nil {
			return fmt.Errorf("migrating to schema 2: %w", err)
		}
	}
	if v < 7 { // records_aud_id became partial: schema.sql builds it again
		if _, err := tx.ExecContext(ctx, `DROP INDEX IF EXISTS records_aud_id`); err != nil {
			return fmt.Errorf("migrating to schema 7: %w", err)
		}
	}
	if v < 8 { // and records_ns_key
		if _, err := tx.ExecContext(ctx, `DROP INDEX IF EXISTS records_ns_key`); err != nil {
			return fmt.Errorf("migrating to schema 8: %w", err)
		}
	}
	if v < 29 { // records_ns_key holds head; records_head goes
		if _, err := tx.ExecContext(ctx, `DROP INDEX IF EXISTS records_head; DROP INDEX IF EXISTS records_ns_key`); err != nil {
			return fmt.Errorf("migrating to schema 29: %w", err)
		}
	}
	if v < 3 { // records_waiting's condition changed (same rows)
		if _, err := tx.ExecContext(ctx, `DROP INDEX IF EXISTS records_waiting`); err != nil {
			return fmt.Errorf("migrating to schema 3: %w", err)
		}
	}
	if hasEdges == 1 && hasChildRid == 0 {
		if _, err := tx.ExecContext(ctx, `ALTER TABLE edges ADD COLUMN child_rid INTEGER NOT NULL DEFAULT 0;
UPDATE edges SET child_rid = (SELECT rid FROM records r WHERE r.id = edges.child)`); err != nil {
			return fmt.Errorf("migrating to schema 4: %w", err)
		}
	}
	if hasTriPending == 1 {
		if _, err := tx.ExecContext(ctx, `INSERT INTO records_tri (rowid, norm) SELECT rid, norm FROM tri_pending ORDER BY rid;
DROP TABLE tri_pending`); err != nil {
			return fmt.Errorf("migrating to schema 5: %w", err)
		}
	}
	if hasNodeIdx == 1 { // legacyNodesTable creates the new log_nodes
		if _, err := tx.ExecContext(ctx, `ALTER TABLE log_nodes RENAME TO log_nodes_5`); err != nil {
			return fmt.Errorf("migrating to schema 6: %w", err)
		}
	}
	if hasPrincipals == 1 && hasLogIndex == 0 {
		if _, err := tx.ExecContext(ctx, `ALTER TABLE principals ADD COLUMN log_index INTEGER`); err != nil {
			return fmt.Errorf("migrating to schema 10: %w", err)
		}
	}
	if hasRecords == 1 && v < 28 {
		if err := dropFTS(ctx, tx); err != nil {
			return fmt.Errorf("migrating to schema 28: %w", err)
		}
	}
	if hasRecords == 1 && v < 21 {
		if _, err := tx.ExecContext(ctx, `DROP TABLE IF EXISTS records_tri`); err != nil {
			return fmt.Errorf("migrating to schema 21: %w", err)
		}
	}
	if sharedLog == 1 {
		if err := tenantLogsBefore(ctx, tx, hasNodeIdx == 1); err != nil {
			return fmt.Errorf("migrating to schema 13: %w", err)
		}
	}
	if hasRecords == 1 && v < 30 { // the older steps below write log_nodes; foldNodes moves it
		if _, err := tx.ExecContext(ctx, legacyNodesTable); err != nil {
			return fmt.Errorf("migrating to schema 30: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, schema); err != nil {
		return err
	}
	if hasRecords == 1 && v < 28 {
		slog.Info("sqlite: migrating to schema 28: indexing every record's search terms again (once; a few seconds per 100,000 records)")
		start := time.Now()
		if err := reindexFTS(ctx, tx); err != nil {
			return fmt.Errorf("migrating to schema 28: %w", err)
		}
		slog.Info("sqlite: migrated to schema 28", "took", time.Since(start).Round(time.Millisecond))
	}
	if hasRecords == 1 && v < 21 {
		slog.Info("sqlite: migrating to schema 21: indexing every record's canonical gate text again (once; a few seconds per 100,000 records)")
		start := time.Now()
		n, err := reindexTri(ctx, tx)
		if err != nil {
			return fmt.Errorf("migrating to schema 21: %w", err)
		}
		slog.Info("sqlite: migrated to schema 21", "records", n, "took", time.Since(start).Round(time.Millisecond))
	}
	if _, err := tx.ExecContext(ctx, vectorSchema); err != nil {
		return fmt.Errorf("migrating to schema 15: %w", err)
	}
	if hasRecords == 1 && v < 27 {
		res, err := tx.ExecContext(ctx, `DELETE FROM vectors WHERE substr(model, 1, 8) = 'builtin-' OR substr(model, 1, 6) = 'glove-'`)
		if err != nil {
			return fmt.Errorf("migrating to schema 27: %w", err)
		}
		if n, _ := res.RowsAffected(); n > 0 {
			slog.Info("sqlite: migrated to schema 27: the built-in embedder's vectors are no longer stored (its searches score the records' texts)", "deleted", n)
		}
	}
	if hasPrincipals == 1 && hasLogIndex == 0 {
		leaves := "log_leaves"
		if sharedLog == 1 {
			leaves = "log_leaves_12"
		}
		if err := linkPrincipals(ctx, tx, leaves); err != nil {
			return fmt.Errorf("migrating to schema 10: %w", err)
		}
	}
	if hasNodeIdx == 1 && sharedLog == 0 {
		if _, err := tx.ExecContext(ctx, `INSERT INTO log_nodes (seq, level, hash)
 SELECT ((idx + 1) << level) - 1, level, hash FROM log_nodes_5 ORDER BY 1, 2;
DROP TABLE log_nodes_5`); err != nil {
			return fmt.Errorf("migrating to schema 6: %w", err)
		}
	}
	if sharedLog == 1 { // tree nodes of schema 5 and before go too
		if err := tenantLogsAfter(ctx, tx); err != nil {
			return fmt.Errorf("migrating to schema 13: %w", err)
		}
	}
	if v < 26 {
		if err := packLeaves(ctx, tx); err != nil {
			return fmt.Errorf("migrating to schema 26: %w", err)
		}
	}
	if v < 30 {
		if err := foldNodes(ctx, tx); err != nil {
			return fmt.Errorf("migrating to schema 30: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, schemaVersion)); err != nil {
		return err
	}
	return tx.Commit()
}
