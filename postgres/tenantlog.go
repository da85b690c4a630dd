package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/tlog"
	"github.com/jackc/pgx/v5"
)

// Meta returns the store setting name; "" when unset.
func (s *Store) Meta(ctx context.Context, name string) (string, error) {
	var v string
	err := s.pool.QueryRow(ctx, `SELECT value FROM meta WHERE name = $1`, name).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	return v, classify(err)
}

// SetMeta sets name to value unless it is set, and returns what it holds;
// of servers setting it at once, the first wins.
func (s *Store) SetMeta(ctx context.Context, name, value string) (string, error) {
	if _, err := s.pool.Exec(ctx, `INSERT INTO meta (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`, name, value); err != nil {
		return "", classify(err)
	}
	return s.Meta(ctx, name)
}

var _ custody.LegacyLog = (*txn)(nil)

// LegacyTenants calls fn with the tenant of each leaf of the log all
// tenants shared before migration 7, in order (log_legacy).
func (t *txn) LegacyTenants(ctx context.Context, fn func(uint64, string) error) error {
	rows, err := t.tx.Query(ctx, `SELECT idx, tenant FROM log_legacy ORDER BY idx`)
	if err != nil {
		return classify(err)
	}
	defer rows.Close()
	for rows.Next() {
		var i int64
		var tenant string
		if err := rows.Scan(&i, &tenant); err != nil {
			return classify(err)
		}
		if err := fn(uint64(i), tenant); err != nil {
			return err
		}
	}
	return classify(rows.Err())
}

// LegacyCheckpoint returns the latest checkpoint of the old shared log.
func (t *txn) LegacyCheckpoint(ctx context.Context) (uint64, []byte, error) {
	var size int64
	var note []byte
	err := t.tx.QueryRow(ctx, `SELECT size, note FROM log_legacy_checkpoints ORDER BY size DESC LIMIT 1`).Scan(&size, &note)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil, custody.ErrNotFound
	}
	return uint64(size), note, classify(err)
}

// tenantLogs is the Go step of migration 007_tenant_logs, after its SQL
// has re-sequenced the leaves and moved the records' and principals' log
// indexes (log_remap maps the old indexes to the new): it moves the index
// each record's receipt names, and computes each tenant's tree nodes.
func tenantLogs(ctx context.Context, tx pgx.Tx) error {
	rows, err := tx.Query(ctx, `SELECT old, new FROM log_remap`)
	if err != nil {
		return err
	}
	remap := map[int64]int64{}
	for rows.Next() {
		var o, n int64
		if err := rows.Scan(&o, &n); err != nil {
			rows.Close()
			return err
		}
		remap[o] = n
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if err := remapReceipts(ctx, tx, remap); err != nil {
		return fmt.Errorf("moving the receipts' log indexes: %w", err)
	}
	tenants, err := logTenants(ctx, tx)
	if err != nil {
		return err
	}
	for _, t := range tenants {
		if err := rebuildNodes(ctx, tx, t); err != nil {
			return fmt.Errorf("computing the tree of %s's log: %w", t, err)
		}
	}
	return nil
}

// remapReceipts rewrites the log_index of every record's receipt (JSON
// text) through remap, leaving its other fields' bytes as they are.
func remapReceipts(ctx context.Context, tx pgx.Tx, remap map[int64]int64) error {
	rows, err := tx.Query(ctx, `SELECT id, receipt FROM records WHERE receipt LIKE '%"log_index":%'`)
	if err != nil {
		return err
	}
	var ids, texts []string
	for rows.Next() {
		var id, receipt string
		if err := rows.Scan(&id, &receipt); err != nil {
			rows.Close()
			return err
		}
		var fields map[string]json.RawMessage
		if json.Unmarshal([]byte(receipt), &fields) != nil {
			continue
		}
		var old int64
		if json.Unmarshal(fields["log_index"], &old) != nil {
			continue
		}
		n, ok := remap[old]
		if !ok {
			continue
		}
		fields["log_index"] = json.RawMessage(fmt.Sprint(n))
		b, err := json.Marshal(fields)
		if err != nil {
			rows.Close()
			return err
		}
		ids, texts = append(ids, id), append(texts, string(b))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `UPDATE records r SET receipt = u.receipt FROM unnest($1::text[], $2::text[]) AS u(id, receipt) WHERE r.id = u.id`, ids, texts)
	return err
}

// rebuildNodes computes and stores every tree node of tenant's log.
func rebuildNodes(ctx context.Context, tx pgx.Tx, tenant string) error {
	rows, err := tx.Query(ctx, `SELECT data FROM log_leaves WHERE tenant = $1 ORDER BY idx`, tenant)
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
		hashes = append(hashes, tlog.LeafHash(d))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	nodes, _, err := tlog.AppendMany(ctx, tlog.NewMemNodes(), 0, hashes)
	if err != nil {
		return err
	}
	for start := 0; start < len(nodes); start += 5000 {
		part := nodes[start:min(start+5000, len(nodes))]
		levels, idxs, hs := make([]int32, len(part)), make([]int64, len(part)), make([][]byte, len(part))
		for i, n := range part {
			levels[i], idxs[i], hs[i] = int32(n.ID.Level), int64(n.ID.Index), n.Hash
		}
		if _, err := tx.Exec(ctx, `INSERT INTO log_nodes (tenant, level, idx, hash) SELECT $1, * FROM unnest($2::int[], $3::bigint[], $4::bytea[])`,
			tenant, levels, idxs, hs); err != nil {
			return err
		}
	}
	return nil
}
