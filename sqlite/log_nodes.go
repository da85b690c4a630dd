package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"time"

	"github.com/custody-mem/custody/tlog"
	"github.com/transparency-dev/merkle/compact"
)

// Tree nodes in their leaf's row (schema 30). The append of leaf seq
// completes the nodes of levels 0 to k whose last leaf it is: (level,
// (seq+1)>>level − 1) for each level up to the number of trailing ones of
// seq (level 0 is the leaf's own hash). log_leaves.nodes holds their
// hashes one after the other, level by level, 32 bytes each, so a node
// is read from its leaf's row, and an append writes one row, where a
// table of its own (log_nodes, schema 6 to 29) cost a statement and
// about a page of its own a write.

// nodeSeq is the leaf whose append completed node id: the row that holds
// it.
func nodeSeq(id compact.NodeID) uint64 { return (id.Index+1)<<id.Level - 1 }

// packNodes is the nodes column of leaf seq's row: nodes are what its
// append completed, level 0 first.
func packNodes(seq uint64, nodes []tlog.Node) ([]byte, error) {
	out := make([]byte, 0, len(nodes)*tlog.HashSize)
	for i, n := range nodes {
		if n.ID.Level != uint(i) || nodeSeq(n.ID) != seq || len(n.Hash) != tlog.HashSize {
			return nil, fmt.Errorf("sqlite: the append of leaf %d completed node (%d, %d) out of order", seq, n.ID.Level, n.ID.Index)
		}
		out = append(out, n.Hash...)
	}
	return out, nil
}

// nodeAt is where node id's hash starts in the nodes column of its
// leaf's row (levels past 63, which no tree of 2^64 leaves has, all
// start past every row's end).
func nodeAt(id compact.NodeID) int { return int(min(id.Level, 64)) * tlog.HashSize }

// nodeIn is node id's hash in nodes, the nodes column of its leaf's
// row; nil when the row holds no hash at its level.
func nodeIn(nodes []byte, id compact.NodeID) []byte {
	at := nodeAt(id)
	if len(nodes) < at+tlog.HashSize {
		return nil
	}
	return nodes[at : at+tlog.HashSize : at+tlog.HashSize]
}

// legacyNodesTable is log_nodes as schemas 6 to 29 kept it: the older
// migrations (to schemas 6 and 13) write the nodes there, and
// foldNodes moves them into the leaves' rows.
const legacyNodesTable = `CREATE TABLE IF NOT EXISTS log_nodes (
  tenant TEXT NOT NULL,
  seq    INTEGER NOT NULL,
  level  INTEGER NOT NULL,
  hash   BLOB NOT NULL,
  PRIMARY KEY (tenant, seq, level)
) WITHOUT ROWID`

// foldNodes moves the nodes of log_nodes into their leaves' rows and
// drops the table (migration to schema 30). A level missing below the
// highest one a leaf's row holds, or a hash that is not 32 bytes, is
// kept as 32 zero bytes: verify reports it as a node that differs, as it
// reported the row before.
func foldNodes(ctx context.Context, tx *sql.Tx) error {
	var hasColumn, hasTable int
	if err := tx.QueryRowContext(ctx, `SELECT
 (SELECT COUNT(*) FROM pragma_table_info('log_leaves') WHERE name = 'nodes'),
 (SELECT COUNT(*) FROM sqlite_schema WHERE type = 'table' AND name = 'log_nodes')`).Scan(&hasColumn, &hasTable); err != nil {
		return err
	}
	if hasColumn == 0 {
		if _, err := tx.ExecContext(ctx, `ALTER TABLE log_leaves ADD COLUMN nodes BLOB NOT NULL DEFAULT x''`); err != nil {
			return err
		}
	}
	if hasTable == 0 {
		return nil
	}
	start := time.Now()
	rows, err := tx.QueryContext(ctx, `SELECT tenant, MAX(seq) FROM log_nodes GROUP BY tenant ORDER BY tenant`)
	if err != nil {
		return err
	}
	last := map[string]int64{}
	var tenants []string
	for rows.Next() {
		var tenant string
		var seq int64
		if err := rows.Scan(&tenant, &seq); err != nil {
			rows.Close()
			return err
		}
		tenants = append(tenants, tenant)
		last[tenant] = seq
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	st, err := tx.PrepareContext(ctx, `UPDATE log_leaves SET nodes = ? WHERE tenant = ? AND idx = ?`)
	if err != nil {
		return err
	}
	defer st.Close()
	leaves := 0
	for _, tenant := range tenants {
		for lo := int64(0); lo <= last[tenant]; lo += foldNodesRange {
			n, err := foldNodeRange(ctx, tx, st, tenant, lo, lo+foldNodesRange)
			if err != nil {
				return err
			}
			leaves += n
		}
	}
	if _, err := tx.ExecContext(ctx, `DROP TABLE log_nodes`); err != nil {
		return err
	}
	if leaves > 1000 {
		slog.Info("sqlite: migrated to schema 30: the log's tree nodes are kept in their leaves' rows", "leaves", leaves, "took", time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// foldNodesRange is how many leaves' nodes foldNodes holds in memory at a
// time.
const foldNodesRange = 1 << 16

// foldNodeRange writes the nodes of tenant's leaves lo to hi−1 into their
// rows with st, and says how many rows it wrote.
func foldNodeRange(ctx context.Context, tx *sql.Tx, st *sql.Stmt, tenant string, lo, hi int64) (int, error) {
	rows, err := tx.QueryContext(ctx, `SELECT seq, level, hash FROM log_nodes WHERE tenant = ? AND seq >= ? AND seq < ? ORDER BY seq, level`, tenant, lo, hi)
	if err != nil {
		return 0, err
	}
	type leafNodes struct {
		seq   int64
		nodes []byte
	}
	var out []leafNodes
	for rows.Next() {
		var seq, level int64
		var hash []byte
		if err := rows.Scan(&seq, &level, &hash); err != nil {
			rows.Close()
			return 0, err
		}
		if level < 0 || level >= 64 {
			continue // no append completes such a node; verify recomputes the tree without it
		}
		if n := len(out); n == 0 || out[n-1].seq != seq {
			out = append(out, leafNodes{seq: seq})
		}
		r := &out[len(out)-1]
		for len(r.nodes) < int(level+1)*tlog.HashSize {
			r.nodes = append(r.nodes, make([]byte, tlog.HashSize)...)
		}
		if len(hash) == tlog.HashSize {
			copy(r.nodes[level*tlog.HashSize:], hash)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	for _, r := range out {
		if _, err := st.ExecContext(ctx, r.nodes, tenant, r.seq); err != nil {
			return 0, err
		}
	}
	return len(out), nil
}
