package sqlite

import (
	"context"
	"strings"

	"github.com/custody-mem/custody/tlog"
	"github.com/transparency-dev/merkle/compact"
)

// joinedNodes is the most node ids readNodes fetches as one value: every
// proof (at most about 2·log2(size) nodes) and every append's border
// nodes; longer lists (verify, the legacy log) take the IN (VALUES …)
// query, one row per node.
const joinedNodes = 64

// readNodesJoined reads the nodes ids of tenant's tree as one blob, the
// hashes one after the other in the order of ids: one scalar subquery (a
// primary-key probe) per node, one row, one column. Against a row per node
// out of an IN (VALUES …) list it spares the temporary table of the list
// and a step, a scan and the driver's per-row work per node. The text
// varies with the number of ids only, so a cached statement serves each
// count. A leaf's row too short for its node's level (log_nodes.go)
// makes the blob NULL, and one whose column is not a blob may make it
// the wrong length: then the rows are read one per leaf (readNodeRows),
// which names the missing node or returns the bytes as stored.
func readNodesJoined(ctx context.Context, q queryer, tenant string, ids []compact.NodeID) ([][]byte, error) {
	var b strings.Builder
	args := make([]any, 0, 3*len(ids)+1)
	args = append(args, tenant)
	b.WriteString(`SELECT CAST(`)
	for i, id := range ids {
		if i > 0 {
			b.WriteString(" || ")
		}
		// The node's 32 bytes of its leaf's row (log_nodes.go).
		b.WriteString(`(SELECT CASE WHEN length(nodes) >= ? THEN substr(nodes, ?, 32) END FROM log_leaves WHERE tenant = ?1 AND idx = ?)`)
		at := nodeAt(id)
		args = append(args, at+tlog.HashSize, at+1, nodeSeq(id))
	}
	b.WriteString(` AS BLOB)`)
	var joined []byte
	if err := q.QueryRowContext(ctx, b.String(), args...).Scan(&joined); err != nil {
		return nil, err
	}
	if len(joined) != tlog.HashSize*len(ids) {
		return readNodeRows(ctx, q, tenant, ids)
	}
	out := make([][]byte, len(ids))
	for i := range out {
		out[i] = joined[i*tlog.HashSize : (i+1)*tlog.HashSize : (i+1)*tlog.HashSize]
	}
	return out, nil
}
