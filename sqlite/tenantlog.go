package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/tlog"
)

// Meta returns the store setting name; "" when unset.
func (s *Store) Meta(ctx context.Context, name string) (string, error) {
	var v string
	err := s.reader().QueryRowContext(ctx, `SELECT value FROM meta WHERE name = ?`, name).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return v, err
}

// SetMeta sets name to value unless it is set, and returns what it holds.
func (s *Store) SetMeta(ctx context.Context, name, value string) (string, error) {
	var got string
	err := s.Update(ctx, func(tx custody.Tx) error {
		t := tx.(*txn)
		if err := t.exec(ctx, `INSERT INTO meta (name, value) VALUES (?,?) ON CONFLICT (name) DO NOTHING`, name, value); err != nil {
			return err
		}
		return t.raw().QueryRowContext(ctx, `SELECT value FROM meta WHERE name = ?`, name).Scan(&got)
	})
	return got, err
}

var _ custody.LegacyLog = (*txn)(nil)

// LegacyTenants calls fn with the tenant of each leaf of the log all
// tenants shared before schema 13, in order (log_legacy).
func (t *txn) LegacyTenants(ctx context.Context, fn func(uint64, string) error) error {
	rows, err := t.raw().QueryContext(ctx, `SELECT idx, tenant FROM log_legacy ORDER BY idx`)
	if err != nil {
		return unavailable(err)
	}
	defer rows.Close()
	for rows.Next() {
		var i uint64
		var tenant string
		if err := rows.Scan(&i, &tenant); err != nil {
			return err
		}
		if err := fn(i, tenant); err != nil {
			return err
		}
	}
	return rows.Err()
}

// LegacyCheckpoint returns the latest checkpoint of the old shared log.
func (t *txn) LegacyCheckpoint(ctx context.Context) (uint64, []byte, error) {
	var size uint64
	var note []byte
	err := t.raw().QueryRowContext(ctx, `SELECT size, note FROM log_legacy_checkpoints ORDER BY size DESC LIMIT 1`).Scan(&size, &note)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil, custody.ErrNotFound
	}
	return size, note, err
}

// Schema 13: one log per tenant.
//
// Up to schema 12 every tenant's entries shared one tree. Schema 13
// re-sequences it (custody.LegacyLog says why): each tenant's leaves, in
// their old order and unchanged, become that tenant's log from index 0;
// log_legacy keeps the tenant of each old index, so the old tree (and the
// checkpoints of it, moved to log_legacy_checkpoints) still verifies; the
// tree nodes are computed again per tenant; and every stored log index
// (records, their receipts, principals) is moved to its new index.

// tenantLogsBefore renames the old log tables out of schema.sql's way; it
// runs before schema.sql, tenantLogsAfter after.
// (log_nodes of schema 5 and before is log_nodes_5 by then).
func tenantLogsBefore(ctx context.Context, tx *sql.Tx, oldNodes bool) error {
	q := `ALTER TABLE log_leaves RENAME TO log_leaves_12;
ALTER TABLE checkpoints RENAME TO checkpoints_12;`
	if !oldNodes {
		q += `ALTER TABLE log_nodes RENAME TO log_nodes_12`
	}
	_, err := tx.ExecContext(ctx, q)
	return err
}

// tenantLogsAfter moves the old shared log into the tenants' logs.
func tenantLogsAfter(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, `
INSERT INTO log_legacy (idx, tenant) SELECT idx, tenant FROM log_leaves_12 ORDER BY idx;
INSERT INTO log_legacy_checkpoints (size, note) SELECT size, note FROM checkpoints_12;
CREATE TEMP TABLE log_remap (old INTEGER PRIMARY KEY, new INTEGER NOT NULL);
INSERT INTO log_remap (old, new)
 SELECT idx, ROW_NUMBER() OVER (PARTITION BY tenant ORDER BY idx) - 1 FROM log_leaves_12;
INSERT INTO log_leaves (tenant, idx, data)
 SELECT l.tenant, m.new, l.data FROM log_leaves_12 l JOIN log_remap m ON m.old = l.idx ORDER BY l.tenant, m.new;
UPDATE records SET log_index = COALESCE((SELECT new FROM log_remap WHERE old = records.log_index), log_index);
UPDATE records SET receipt = json_set(receipt, '$.log_index', COALESCE((SELECT new FROM log_remap WHERE old = json_extract(receipt, '$.log_index')), json_extract(receipt, '$.log_index')))
 WHERE json_valid(receipt) AND json_type(receipt, '$.log_index') = 'integer';
UPDATE principals SET log_index = COALESCE((SELECT new FROM log_remap WHERE old = principals.log_index), log_index) WHERE log_index IS NOT NULL;
DROP TABLE log_remap;
DROP TABLE log_leaves_12;
DROP TABLE checkpoints_12;
DROP TABLE IF EXISTS log_nodes_12;
DROP TABLE IF EXISTS log_nodes_5`); err != nil {
		return err
	}
	rows, err := tx.QueryContext(ctx, `SELECT DISTINCT tenant FROM log_leaves ORDER BY tenant`)
	if err != nil {
		return err
	}
	var tenants []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			rows.Close()
			return err
		}
		tenants = append(tenants, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, t := range tenants {
		if err := rebuildNodes(ctx, tx, t); err != nil {
			return fmt.Errorf("computing the tree of %s's log: %w", t, err)
		}
	}
	return nil
}

// rebuildNodes computes and stores every tree node of tenant's log.
func rebuildNodes(ctx context.Context, tx *sql.Tx, tenant string) error {
	rows, err := tx.QueryContext(ctx, `SELECT data FROM log_leaves WHERE tenant = ? ORDER BY idx`, tenant)
	if err != nil {
		return err
	}
	var hashes [][]byte
	for rows.Next() {
		var d []byte
		if err := rows.Scan(&d); err != nil {
			rows.Close()
			return err
		}
		hashes = append(hashes, tlog.LeafHash(unpackLeaf(d)))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	nodes, _, err := tlog.AppendMany(ctx, tlog.NewMemNodes(), 0, hashes)
	if err != nil {
		return err
	}
	st, err := tx.PrepareContext(ctx, `INSERT INTO log_nodes (tenant, seq, level, hash) VALUES (?,?,?,?)`)
	if err != nil {
		return err
	}
	defer st.Close()
	for _, n := range nodes {
		if _, err := st.ExecContext(ctx, tenant, nodeSeq(n.ID), n.ID.Level, n.Hash); err != nil {
			return err
		}
	}
	return nil
}
