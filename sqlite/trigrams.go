package sqlite

import "context"

// triFlushRows is how many pending trigram rows make the writer move them
// into records_tri inside the next commit, under a load that leaves it no
// idle moment; it bounds the rows the gate scans with instr.
const triFlushRows = 256

// The writer counts the rows it queues (Store.triRows) rather than
// counting the table at every commit. A write that rolls back leaves the
// count high, which only moves the rows sooner; every move resets it.

// addTrigrams queues a record's normalised text for the trigram index.
func (t *txn) addTrigrams(ctx context.Context, rid int64, norm string) error {
	if err := t.exec(ctx, `INSERT INTO tri_pending (rid, norm) VALUES (?,?)`, rid, norm); err != nil {
		return err
	}
	if t.pending != nil {
		*t.pending++
	}
	return nil
}

// dropTrigrams removes a record's text from the trigram index, wherever it
// is.
func (t *txn) dropTrigrams(ctx context.Context, rid int64) error {
	res, err := t.ExecContext(ctx, `DELETE FROM tri_pending WHERE rid = ?`, rid)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n > 0 {
		return err
	}
	return t.exec(ctx, `DELETE FROM records_tri WHERE rowid = ?`, rid)
}

// flushTrigrams moves every pending row into records_tri, one FTS5 segment
// for all of them, and reports whether there were any.
func (t *txn) flushTrigrams(ctx context.Context) (bool, error) {
	res, err := t.ExecContext(ctx, `INSERT INTO records_tri (rowid, norm) SELECT rid, norm FROM tri_pending ORDER BY rid`)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	if err != nil || n == 0 {
		return false, err
	}
	if err := t.exec(ctx, `DELETE FROM tri_pending`); err != nil {
		return false, err
	}
	if t.pending != nil {
		*t.pending = 0
	}
	return true, nil
}
