package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/tlog"
	"github.com/transparency-dev/merkle/compact"
)

// queryer is what node reads need: a transaction or the read pool.
type queryer interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
	QueryRowContext(context.Context, string, ...any) *sql.Row
}

// readNodes fetches node hashes of tenant's tree in one query.
func readNodes(ctx context.Context, q queryer, tenant string, ids []compact.NodeID) ([][]byte, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	if len(ids) <= joinedNodes {
		return readNodesJoined(ctx, q, tenant, ids) // proof_nodes.go
	}
	return readNodeRows(ctx, q, tenant, ids)
}

// readNodeRows is readNodes with one row per leaf whose row holds a
// node of ids.
func readNodeRows(ctx context.Context, q queryer, tenant string, ids []compact.NodeID) ([][]byte, error) {
	var b strings.Builder
	args := make([]any, 0, len(ids)+1)
	args = append(args, tenant)
	b.WriteString(`SELECT idx, nodes FROM log_leaves WHERE tenant = ? AND idx IN (VALUES `)
	seen := make(map[uint64]bool, len(ids))
	for _, id := range ids {
		seq := nodeSeq(id)
		if seen[seq] {
			continue
		}
		if len(seen) > 0 {
			b.WriteString(",")
		}
		seen[seq] = true
		b.WriteString("(?)")
		args = append(args, seq)
	}
	b.WriteString(")")
	rows, err := q.QueryContext(ctx, b.String(), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	bySeq := make(map[uint64][]byte, len(seen))
	for rows.Next() {
		var seq uint64
		var nodes []byte
		if err := rows.Scan(&seq, &nodes); err != nil {
			return nil, err
		}
		bySeq[seq] = nodes
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	got := make(map[compact.NodeID][]byte, len(ids))
	for _, id := range ids {
		if h := nodeIn(bySeq[nodeSeq(id)], id); h != nil {
			got[id] = h
		}
	}
	return tlog.InOrder(ids, got)
}

func logSize(ctx context.Context, q queryer, tenant string) (uint64, error) {
	var n sql.NullInt64
	if err := q.QueryRowContext(ctx, `SELECT MAX(idx) FROM log_leaves WHERE tenant = ?`, tenant).Scan(&n); err != nil {
		return 0, err
	}
	if !n.Valid {
		return 0, nil
	}
	return uint64(n.Int64) + 1, nil
}

// AppendLeaf appends a leaf to tenant's log, with the tree nodes it
// completes in its row (log_nodes.go). The log's border is the writer's
// copy when it has one (and then nothing is read), else read from the
// transaction; either way it is the writer's copy after, one leaf further
// (known.go says when it holds).
func (t *txn) AppendLeaf(ctx context.Context, tenant string, leaf []byte) (uint64, error) {
	return t.appendLeaf(ctx, tenant, leaf, storedLeaf(leaf))
}

// AppendPackedLeaf is AppendLeaf of a leaf the caller has packed already
// (Store.PackLeaf gave packed for leaf), so that the writer does not.
func (t *txn) AppendPackedLeaf(ctx context.Context, tenant string, leaf, packed []byte) (uint64, error) {
	return t.appendLeaf(ctx, tenant, leaf, packed)
}

// appendLeaf appends leaf, whose row holds stored (leaf_pack.go).
func (t *txn) appendLeaf(ctx context.Context, tenant string, leaf, stored []byte) (uint64, error) {
	if t.ro {
		return 0, errReadOnly
	}
	border := t.tip(tenant)
	if border == nil {
		if err := t.insertHeld(ctx); err != nil { // before reading the log
			return 0, err
		}
		size, err := logSize(ctx, t, tenant)
		if err != nil {
			return 0, err
		}
		if border, err = tlog.ReadBorder(ctx, &nodeReader{t: t, tenant: tenant}, size); err != nil {
			return 0, err
		}
	}
	size := border.Size()
	// From here on the border has moved on: a failure forgets it (the
	// writer forgets all it knows anyway as the write rolls back).
	fail := func(err error) (uint64, error) {
		if t.known != nil {
			delete(t.known.tips, tenant)
		}
		return 0, err
	}
	nodes, err := border.Append(tlog.LeafHash(leaf))
	if err != nil {
		return fail(err)
	}
	packed, err := packNodes(size, nodes) // log_nodes.go
	if err != nil {
		return fail(err)
	}
	if t.holding() { // log_hold.go
		h := &t.known.held
		h.leaves = append(h.leaves, tenant, size, stored, packed)
	} else if err := t.exec(ctx, `INSERT INTO log_leaves (tenant, idx, data, nodes) VALUES (?,?,?,?)`, tenant, size, stored, packed); err != nil {
		return fail(err)
	}
	if t.known != nil {
		if t.known.tips == nil {
			t.known.tips = map[string]*tlog.Border{}
		}
		t.known.tips[tenant] = border
	}
	return size, nil
}

// tip is the writer's copy of tenant's log border, or nil.
func (t *txn) tip(tenant string) *tlog.Border {
	if t.known == nil {
		return nil
	}
	return t.known.tips[tenant]
}

// nodeReader reads a tenant's log nodes from a transaction.
type nodeReader struct {
	t      *txn
	tenant string
}

func (r *nodeReader) Nodes(ctx context.Context, ids []compact.NodeID) ([][]byte, error) {
	return readNodes(ctx, r.t, r.tenant, ids)
}

// LogTenants lists the tenants that have a log (entries or a checkpoint).
func (s *Store) LogTenants(ctx context.Context) ([]string, error) { return logTenants(ctx, s.reader()) }

// LogSize is the number of leaves of tenant's log.
func (s *Store) LogSize(ctx context.Context, tenant string) (uint64, error) {
	return logSize(ctx, s.reader(), tenant)
}

// Leaves returns tenant's leaves in [start, end).
func (s *Store) Leaves(ctx context.Context, tenant string, start, end uint64) ([]custody.Leaf, error) {
	return readLeaves(ctx, s.reader(), tenant, start, end)
}

// Nodes reads stored tree nodes of tenant's tree.
func (s *Store) Nodes(ctx context.Context, tenant string, ids []compact.NodeID) ([][]byte, error) {
	return readNodes(ctx, s.reader(), tenant, ids)
}

// LogTenants lists the tenants that have a log in the transaction's
// snapshot.
func (t *txn) LogTenants(ctx context.Context) ([]string, error) {
	if err := t.insertHeld(ctx); err != nil {
		return nil, err
	}
	return logTenants(ctx, t)
}

// LogSize is the number of leaves of tenant's log in the transaction's
// snapshot.
func (t *txn) LogSize(ctx context.Context, tenant string) (uint64, error) {
	if err := t.insertHeld(ctx); err != nil {
		return 0, err
	}
	return logSize(ctx, t, tenant)
}

// Leaves returns tenant's leaves in [start, end) of the transaction's
// snapshot.
func (t *txn) Leaves(ctx context.Context, tenant string, start, end uint64) ([]custody.Leaf, error) {
	if err := t.insertHeld(ctx); err != nil {
		return nil, err
	}
	return readLeaves(ctx, t, tenant, start, end)
}

// Nodes reads stored tree nodes in the transaction's snapshot. Its query
// text varies with the number of ids, so it stays out of the statement
// cache (the store's own Nodes, a proof's, keeps one per count: parsing
// it was a fifth of a proof).
func (t *txn) Nodes(ctx context.Context, tenant string, ids []compact.NodeID) ([][]byte, error) {
	if err := t.insertHeld(ctx); err != nil {
		return nil, err
	}
	return readNodes(ctx, t.raw(), tenant, ids)
}

// LatestCheckpoint returns the largest checkpoint of tenant's log in the
// transaction's snapshot; ErrNotFound if none.
func (t *txn) LatestCheckpoint(ctx context.Context, tenant string) (uint64, []byte, error) {
	return latestCheckpoint(ctx, t, tenant)
}

func logTenants(ctx context.Context, q queryer) ([]string, error) {
	// Each distinct tenant is one seek of the tables' keys (a skip scan),
	// not a walk of every leaf.
	rows, err := q.QueryContext(ctx, `WITH RECURSIVE
 l(t) AS (SELECT MIN(tenant) FROM log_leaves UNION ALL SELECT (SELECT MIN(tenant) FROM log_leaves WHERE tenant > l.t) FROM l WHERE l.t IS NOT NULL),
 c(t) AS (SELECT MIN(tenant) FROM checkpoints UNION ALL SELECT (SELECT MIN(tenant) FROM checkpoints WHERE tenant > c.t) FROM c WHERE c.t IS NOT NULL)
SELECT t FROM l WHERE t IS NOT NULL UNION SELECT t FROM c WHERE t IS NOT NULL ORDER BY 1`)
	if err != nil {
		return nil, unavailable(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

func readLeaves(ctx context.Context, q queryer, tenant string, start, end uint64) ([]custody.Leaf, error) {
	rows, err := q.QueryContext(ctx, `SELECT idx, tenant, data FROM log_leaves WHERE tenant = ? AND idx >= ? AND idx < ? ORDER BY idx`, tenant, start, end)
	if err != nil {
		return nil, unavailable(err)
	}
	defer rows.Close()
	var out []custody.Leaf
	for rows.Next() {
		var l custody.Leaf
		if err := rows.Scan(&l.Index, &l.Tenant, &l.Data); err != nil {
			return nil, err
		}
		l.Data = unpackLeaf(l.Data) // leaf_pack.go
		out = append(out, l)
	}
	return out, rows.Err()
}

// SaveCheckpoint stores a signed checkpoint of tenant's log. It goes
// through the writer like every write: the writer goroutine is the only
// user of the write connections, so the statement cache can always
// prepare on the spare one.
func (s *Store) SaveCheckpoint(ctx context.Context, tenant string, size uint64, note []byte) error {
	return s.Update(ctx, func(tx custody.Tx) error {
		return tx.(*txn).exec(ctx, `INSERT INTO checkpoints (tenant, size, note) VALUES (?,?,?) ON CONFLICT (tenant, size) DO NOTHING`, tenant, size, note)
	})
}

// LatestCheckpoint returns the largest stored checkpoint of tenant's log;
// ErrNotFound if none.
func (s *Store) LatestCheckpoint(ctx context.Context, tenant string) (uint64, []byte, error) {
	return latestCheckpoint(ctx, s.reader(), tenant)
}

func latestCheckpoint(ctx context.Context, q queryer, tenant string) (uint64, []byte, error) {
	var size uint64
	var note []byte
	err := q.QueryRowContext(ctx, `SELECT size, note FROM checkpoints WHERE tenant = ? ORDER BY size DESC LIMIT 1`, tenant).Scan(&size, &note)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil, custody.ErrNotFound
	}
	return size, note, err
}
