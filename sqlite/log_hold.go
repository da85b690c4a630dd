package sqlite

import (
	"context"
	"strings"

	custody "github.com/custody-mem/custody"
)

// Held log rows.
//
// A batch of a thousand writes appends a thousand leaves, each with its
// own statement (the leaf and its nodes), and running a statement is
// most of what an append costs the writer. While a write holds its log
// rows (HoldLog, which the service asks for around each write it runs),
// AppendLeaf keeps the rows it would insert, and FlushLog inserts them at
// the end of the write with a statement per 64 rows; the write's other
// statements never read the log tables, and the transaction's reads of
// them (LogSize, Leaves, Nodes, LogTenants, an append without the
// writer's copy of the border) insert the held rows first. A write that
// fails drops them (DropLog), as its savepoint rolls back, and so does the
// writer forgetting what it knows.

// heldRows is what a write holds back: the arguments of each leaf's
// insert (4 a leaf: its tenant, index, packed data and nodes), in the
// order appended.
type heldRows struct {
	on     bool
	leaves []any
}

// heldPerStatement is how many rows one insert of held rows takes at most.
const heldPerStatement = 64

// insertLeavesQueries are the statements that insert n leaves, by n.
var insertLeavesQueries = func() []string {
	qs := make([]string, heldPerStatement+1)
	for n := 1; n < len(qs); n++ {
		qs[n] = `INSERT INTO log_leaves (tenant, idx, data, nodes) VALUES ` + strings.TrimSuffix(strings.Repeat("(?,?,?,?),", n), ",")
	}
	return qs
}()

// HoldLog makes the appends of the write under way hold their rows until
// FlushLog (custody.LogHolder).
func (t *txn) HoldLog() {
	if t.known != nil && !t.ro {
		t.known.held.on = true
	}
}

// FlushLog inserts the rows the write holds and stops holding them.
func (t *txn) FlushLog(ctx context.Context) error {
	if t.known == nil {
		return nil
	}
	err := t.insertHeld(ctx)
	t.known.held = heldRows{}
	return err
}

// DropLog forgets the rows the write holds (it failed) and stops holding
// them.
func (t *txn) DropLog() {
	if t.known != nil {
		t.known.held = heldRows{}
	}
}

// holding reports whether the write holds its log rows.
func (t *txn) holding() bool { return t.known != nil && t.known.held.on }

// insertHeld inserts the rows held so far; the write goes on holding.
func (t *txn) insertHeld(ctx context.Context) error {
	if t.known == nil {
		return nil
	}
	h := &t.known.held
	for len(h.leaves) > 0 {
		n := min(len(h.leaves)/4, heldPerStatement)
		if err := t.exec(ctx, insertLeavesQueries[n], h.leaves[:4*n]...); err != nil {
			return err
		}
		h.leaves = h.leaves[4*n:]
	}
	h.leaves = nil
	return nil
}

var _ custody.LogHolder = (*txn)(nil)
