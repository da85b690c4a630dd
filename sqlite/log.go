package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"maps"
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

// nodeSeq is the leaf whose append completed node id: log_nodes' key.
func nodeSeq(id compact.NodeID) uint64 { return (id.Index+1)<<id.Level - 1 }

// readNodes fetches node hashes in one query.
func readNodes(ctx context.Context, q queryer, ids []compact.NodeID) ([][]byte, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var b strings.Builder
	args := make([]any, 0, 2*len(ids))
	b.WriteString(`SELECT seq, level, hash FROM log_nodes WHERE (seq, level) IN (VALUES `)
	for i, id := range ids {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("(?,?)")
		args = append(args, nodeSeq(id), id.Level)
	}
	b.WriteString(")")
	rows, err := q.QueryContext(ctx, b.String(), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	got := make(map[compact.NodeID][]byte, len(ids))
	for rows.Next() {
		var seq uint64
		var level uint
		var h []byte
		if err := rows.Scan(&seq, &level, &h); err != nil {
			return nil, err
		}
		got[compact.NewNodeID(level, (seq+1)>>level-1)] = h
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return tlog.InOrder(ids, got)
}

func logSize(ctx context.Context, q queryer) (uint64, error) {
	var n sql.NullInt64
	if err := q.QueryRowContext(ctx, `SELECT MAX(idx) FROM log_leaves`).Scan(&n); err != nil {
		return 0, err
	}
	if !n.Valid {
		return 0, nil
	}
	return uint64(n.Int64) + 1, nil
}

// AppendLeaf appends a leaf and the tree nodes it completes.
func (t *txn) AppendLeaf(ctx context.Context, tenant string, leaf []byte) (uint64, error) {
	if t.ro {
		return 0, errReadOnly
	}
	rd := &tipReader{t: t, seen: map[compact.NodeID][]byte{}}
	var size uint64
	if t.known != nil && t.known.tip != nil {
		size = t.known.tip.size
		rd.seen = maps.Clone(t.known.tip.hashes)
	} else {
		var err error
		if size, err = logSize(ctx, t); err != nil {
			return 0, err
		}
	}
	nodes, _, err := tlog.Append(ctx, rd, size, tlog.LeafHash(leaf))
	if err != nil {
		return 0, err
	}
	if err := t.exec(ctx, `INSERT INTO log_leaves (idx, tenant, data) VALUES (?,?,?)`, size, tenant, leaf); err != nil {
		return 0, err
	}
	for _, n := range nodes {
		if err := t.exec(ctx, `INSERT INTO log_nodes (seq, level, hash) VALUES (?,?,?)`, nodeSeq(n.ID), n.ID.Level, n.Hash); err != nil {
			return 0, err
		}
		rd.seen[n.ID] = n.Hash
	}
	if t.known != nil {
		t.known.tip = newLogTip(size+1, rd.seen)
	}
	return size, nil
}

// logTip is the writer's copy of the border nodes of the log at size: the
// nodes the next append reads (see known.go for when it holds).
type logTip struct {
	size   uint64
	hashes map[compact.NodeID][]byte
}

// newLogTip keeps the border nodes of size from known; nil if one is
// missing.
func newLogTip(size uint64, known map[compact.NodeID][]byte) *logTip {
	ids := compact.RangeNodes(0, size, nil)
	tip := &logTip{size: size, hashes: make(map[compact.NodeID][]byte, len(ids))}
	for _, id := range ids {
		h, ok := known[id]
		if !ok {
			return nil
		}
		tip.hashes[id] = h
	}
	return tip
}

// tipReader answers node reads from the nodes it has seen, and reads (and
// remembers) the rest from the transaction.
type tipReader struct {
	t    *txn
	seen map[compact.NodeID][]byte
}

func (r *tipReader) Nodes(ctx context.Context, ids []compact.NodeID) ([][]byte, error) {
	out := make([][]byte, len(ids))
	for i, id := range ids {
		h, ok := r.seen[id]
		if !ok {
			return r.read(ctx, ids)
		}
		out[i] = h
	}
	return out, nil
}

func (r *tipReader) read(ctx context.Context, ids []compact.NodeID) ([][]byte, error) {
	out, err := readNodes(ctx, r.t, ids)
	if err != nil {
		return nil, err
	}
	for i, id := range ids {
		r.seen[id] = out[i]
	}
	return out, nil
}

// LogSize is the number of leaves.
func (s *Store) LogSize(ctx context.Context) (uint64, error) { return logSize(ctx, s.r) }

// Leaves returns the leaves in [start, end).
func (s *Store) Leaves(ctx context.Context, start, end uint64) ([]custody.Leaf, error) {
	return readLeaves(ctx, s.reader(), start, end)
}

// Nodes reads stored tree nodes (tlog.NodeReader).
func (s *Store) Nodes(ctx context.Context, ids []compact.NodeID) ([][]byte, error) {
	return readNodes(ctx, s.reader(), ids)
}

// LogSize is the number of leaves in the transaction's snapshot.
func (t *txn) LogSize(ctx context.Context) (uint64, error) { return logSize(ctx, t) }

// Leaves returns the leaves in [start, end) of the transaction's snapshot.
func (t *txn) Leaves(ctx context.Context, start, end uint64) ([]custody.Leaf, error) {
	return readLeaves(ctx, t, start, end)
}

// Nodes reads stored tree nodes in the transaction's snapshot. Its query
// text varies with the number of ids, so it stays out of the statement
// cache (the store's own Nodes, a proof's, keeps one per count: parsing
// it was a fifth of a proof).
func (t *txn) Nodes(ctx context.Context, ids []compact.NodeID) ([][]byte, error) {
	return readNodes(ctx, t.tx, ids)
}

// LatestCheckpoint returns the largest checkpoint in the transaction's
// snapshot; ErrNotFound if none.
func (t *txn) LatestCheckpoint(ctx context.Context) (uint64, []byte, error) {
	return latestCheckpoint(ctx, t)
}

func readLeaves(ctx context.Context, q queryer, start, end uint64) ([]custody.Leaf, error) {
	rows, err := q.QueryContext(ctx, `SELECT idx, tenant, data FROM log_leaves WHERE idx >= ? AND idx < ? ORDER BY idx`, start, end)
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
		out = append(out, l)
	}
	return out, rows.Err()
}

// SaveCheckpoint stores a signed checkpoint. It goes through the writer
// like every write: the writer goroutine is the only user of the write
// connections, so the statement cache can always prepare on the spare one.
func (s *Store) SaveCheckpoint(ctx context.Context, size uint64, note []byte) error {
	return s.Update(ctx, func(tx custody.Tx) error {
		return tx.(*txn).exec(ctx, `INSERT INTO checkpoints (size, note) VALUES (?,?) ON CONFLICT (size) DO NOTHING`, size, note)
	})
}

// LatestCheckpoint returns the largest stored checkpoint; ErrNotFound if none.
func (s *Store) LatestCheckpoint(ctx context.Context) (uint64, []byte, error) {
	return latestCheckpoint(ctx, s.reader())
}

func latestCheckpoint(ctx context.Context, q queryer) (uint64, []byte, error) {
	var size uint64
	var note []byte
	err := q.QueryRowContext(ctx, `SELECT size, note FROM checkpoints ORDER BY size DESC LIMIT 1`).Scan(&size, &note)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil, custody.ErrNotFound
	}
	return size, note, err
}
