package postgres

import (
	"context"
	"errors"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/tlog"
	"github.com/jackc/pgx/v5"
	"github.com/transparency-dev/merkle/compact"
)

// readNodes fetches node hashes of tenant's tree in one query.
func readNodes(ctx context.Context, q querier, tenant string, ids []compact.NodeID) ([][]byte, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	levels := make([]int32, len(ids))
	idxs := make([]int64, len(ids))
	for i, id := range ids {
		levels[i], idxs[i] = int32(id.Level), int64(id.Index)
	}
	rows, err := q.Query(ctx, `SELECT n.level, n.idx, n.hash FROM log_nodes n
 JOIN unnest($1::int[], $2::bigint[]) AS w(level, idx) ON n.tenant = $3 AND n.level = w.level AND n.idx = w.idx`, levels, idxs, tenant)
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	got := make(map[compact.NodeID][]byte, len(ids))
	for rows.Next() {
		var level int32
		var idx int64
		var h []byte
		if err := rows.Scan(&level, &idx, &h); err != nil {
			return nil, classify(err)
		}
		got[compact.NewNodeID(uint(level), uint64(idx))] = h
	}
	if err := rows.Err(); err != nil {
		return nil, classify(err)
	}
	return tlog.InOrder(ids, got)
}

// sizeQuery reads the size of tenant $1's log.
const sizeQuery = `SELECT COALESCE(MAX(idx) + 1, 0) FROM log_leaves WHERE tenant = $1`

func logSize(ctx context.Context, q querier, tenant string) (uint64, error) {
	var n int64
	if err := q.QueryRow(ctx, sizeQuery, tenant).Scan(&n); err != nil {
		return 0, classify(err)
	}
	return uint64(n), nil
}

// borderQuery reads the size n of tenant $1's log and the stored roots of the perfect
// subtrees that cover [0, n) — one per set bit L of n, at level L and index
// (n >> L) - 1 — which are the nodes an append reads (tlog.Append).
const borderQuery = `WITH s AS (SELECT COALESCE(MAX(idx) + 1, 0) AS n FROM log_leaves WHERE tenant = $1)
SELECT s.n, w.level, w.idx, l.hash FROM s
 LEFT JOIN LATERAL (SELECT g.level, (s.n >> g.level) - 1 AS idx FROM generate_series(0, 62) AS g(level)
   WHERE ((s.n >> g.level) & 1) = 1) AS w ON true
 LEFT JOIN log_nodes l ON l.tenant = $1 AND l.level = w.level AND l.idx = w.idx`

// border reads the log size and the nodes an append needs in one query.
func border(ctx context.Context, q querier, tenant string) (uint64, *tlog.MemNodes, error) {
	rows, err := q.Query(ctx, borderQuery, tenant)
	if err != nil {
		return 0, nil, classify(err)
	}
	size, nodes, err := scanBorder(rows)
	if err != nil {
		return 0, nil, err
	}
	mem := tlog.NewMemNodes()
	mem.Put(nodes) // a node missing here makes tlog.Append fail with ErrMissingNode
	return size, mem, nil
}

// scanBorder reads the rows of borderQuery and closes them.
func scanBorder(rows pgx.Rows) (uint64, []tlog.Node, error) {
	defer rows.Close()
	var size int64
	var nodes []tlog.Node
	for rows.Next() {
		var level *int32
		var idx *int64
		var hash []byte
		if err := rows.Scan(&size, &level, &idx, &hash); err != nil {
			return 0, nil, classify(err)
		}
		if level != nil && hash != nil {
			nodes = append(nodes, tlog.Node{ID: compact.NewNodeID(uint(*level), uint64(*idx)), Hash: hash})
		}
	}
	if err := rows.Err(); err != nil {
		return 0, nil, classify(err)
	}
	return uint64(size), nodes, nil
}

// AppendLeaf appends a leaf to tenant's log and the tree nodes it
// completes. It runs inside Update, which holds the tenant's advisory lock
// (tenantlock.go), so the size read here is the size the leaf extends: no
// other transaction can append to this log in between.
func (t *txn) AppendLeaf(ctx context.Context, tenant string, leaf []byte) (uint64, error) {
	if t.ro {
		return 0, errReadOnly
	}
	size, mem, err := border(ctx, t.tx, tenant)
	if err != nil {
		return 0, err
	}
	if _, err := t.appendAt(ctx, tenant, leaf, size, mem); err != nil {
		return 0, err
	}
	return size, nil
}

// appendAt appends leaf at index size of tenant's log, whose border r
// holds, and returns the nodes it stored.
func (t *txn) appendAt(ctx context.Context, tenant string, leaf []byte, size uint64, r tlog.NodeReader) ([]tlog.Node, error) {
	if t.ro {
		return nil, errReadOnly
	}
	nodes, err := tlog.AppendNodes(ctx, r, size, tlog.LeafHash(leaf))
	if err != nil {
		return nil, err
	}
	levels := make([]int32, len(nodes))
	idxs := make([]int64, len(nodes))
	hashes := make([][]byte, len(nodes))
	for i, n := range nodes {
		levels[i], idxs[i], hashes[i] = int32(n.ID.Level), int64(n.ID.Index), n.Hash
	}
	err = t.execLater(ctx, `WITH leaf AS (INSERT INTO log_leaves (idx, tenant, data) VALUES ($1, $2, $3))
 INSERT INTO log_nodes (tenant, level, idx, hash) SELECT $2, * FROM unnest($4::int[], $5::bigint[], $6::bytea[])`,
		int64(size), tenant, leaf, levels, idxs, hashes)
	if err != nil {
		return nil, err
	}
	return nodes, nil
}

// LogTenants lists the tenants that have a log (entries or a checkpoint).
func (s *Store) LogTenants(ctx context.Context) ([]string, error) { return logTenants(ctx, s.pool) }

// LogSize is the number of leaves of tenant's log.
func (s *Store) LogSize(ctx context.Context, tenant string) (uint64, error) {
	return logSize(ctx, s.pool, tenant)
}

// Leaves returns tenant's leaves in [start, end).
func (s *Store) Leaves(ctx context.Context, tenant string, start, end uint64) ([]custody.Leaf, error) {
	return readLeaves(ctx, s.pool, tenant, start, end)
}

// Nodes reads stored tree nodes of tenant's tree.
func (s *Store) Nodes(ctx context.Context, tenant string, ids []compact.NodeID) ([][]byte, error) {
	return readNodes(ctx, s.pool, tenant, ids)
}

// LogTenants lists the tenants that have a log in the transaction's
// snapshot.
func (t *txn) LogTenants(ctx context.Context) ([]string, error) { return logTenants(ctx, t.tx) }

// LogSize is the number of leaves of tenant's log in the transaction's
// snapshot.
func (t *txn) LogSize(ctx context.Context, tenant string) (uint64, error) {
	return logSize(ctx, t.tx, tenant)
}

// Leaves returns tenant's leaves in [start, end) of the transaction's
// snapshot.
func (t *txn) Leaves(ctx context.Context, tenant string, start, end uint64) ([]custody.Leaf, error) {
	return readLeaves(ctx, t.tx, tenant, start, end)
}

// Nodes reads stored tree nodes in the transaction's snapshot.
func (t *txn) Nodes(ctx context.Context, tenant string, ids []compact.NodeID) ([][]byte, error) {
	return readNodes(ctx, t.tx, tenant, ids)
}

// LatestCheckpoint returns the largest checkpoint of tenant's log in the
// transaction's snapshot; ErrNotFound if none.
func (t *txn) LatestCheckpoint(ctx context.Context, tenant string) (uint64, []byte, error) {
	return latestCheckpoint(ctx, t.tx, tenant)
}

// logTenantsQuery finds the distinct tenants by one index seek each (a
// skip scan), not a walk of every leaf.
const logTenantsQuery = `WITH RECURSIVE
 l(t) AS (SELECT MIN(tenant) FROM log_leaves UNION ALL SELECT (SELECT MIN(tenant) FROM log_leaves WHERE tenant > l.t) FROM l WHERE l.t IS NOT NULL),
 c(t) AS (SELECT MIN(tenant) FROM checkpoints UNION ALL SELECT (SELECT MIN(tenant) FROM checkpoints WHERE tenant > c.t) FROM c WHERE c.t IS NOT NULL)
SELECT t FROM l WHERE t IS NOT NULL UNION SELECT t FROM c WHERE t IS NOT NULL ORDER BY 1`

func logTenants(ctx context.Context, q querier) ([]string, error) {
	rows, err := q.Query(ctx, logTenantsQuery)
	if err != nil {
		return nil, classify(err)
	}
	ts, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return ts, classify(err)
}

func readLeaves(ctx context.Context, q querier, tenant string, start, end uint64) ([]custody.Leaf, error) {
	if !storable(tenant) {
		return nil, nil
	}
	rows, err := q.Query(ctx, `SELECT idx, tenant, data FROM log_leaves WHERE tenant = $1 AND idx >= $2 AND idx < $3 ORDER BY idx`,
		tenant, int64(start), int64(end))
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	var out []custody.Leaf
	for rows.Next() {
		var l custody.Leaf
		var idx int64
		if err := rows.Scan(&idx, &l.Tenant, &l.Data); err != nil {
			return nil, classify(err)
		}
		l.Index = uint64(idx)
		out = append(out, l)
	}
	return out, classify(rows.Err())
}

// SaveCheckpoint stores a signed checkpoint of tenant's log; one already
// stored for the same size is kept.
func (s *Store) SaveCheckpoint(ctx context.Context, tenant string, size uint64, note []byte) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO checkpoints (tenant, size, note) VALUES ($1, $2, $3) ON CONFLICT (tenant, size) DO NOTHING`, tenant, int64(size), note)
	return classify(err)
}

// LatestCheckpoint returns the largest stored checkpoint of tenant's log;
// ErrNotFound if none.
func (s *Store) LatestCheckpoint(ctx context.Context, tenant string) (uint64, []byte, error) {
	return latestCheckpoint(ctx, s.pool, tenant)
}

func latestCheckpoint(ctx context.Context, q querier, tenant string) (uint64, []byte, error) {
	var size int64
	var note []byte
	err := q.QueryRow(ctx, `SELECT size, note FROM checkpoints WHERE tenant = $1 ORDER BY size DESC LIMIT 1`, tenant).Scan(&size, &note)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil, custody.ErrNotFound
	}
	if err != nil {
		return 0, nil, classify(err)
	}
	return uint64(size), note, nil
}
