package sqlite

import (
	"context"

	custody "github.com/custody-mem/custody"
)

// A write adds its record to neither FTS5 index (search, records_fts, and
// the gate's trigrams, records_tri): FTS5 writes a new segment for every
// commit that touches a table, and those two flushes, with the merging
// they cause, were a third of a single write's cost. The write puts the
// record's normalised gate text in index_pending instead, and the writer
// moves the pending records into both indexes in one insert each:
//   - inside a commit, once pendingFlushRows rows wait, under a load that
//     leaves it no idle moment;
//   - when it has been idle for tidyAfter (tidy.go);
//   - before any search (Store.Search), which bm25 must rank over every
//     record written before it.
//
// The gate does not wait: it scans index_pending beside records_tri (instr
// on the same normalised text, the same substring test); pendingFlushRows
// bounds the rows it scans that way.
const pendingFlushRows = 256

// The writer counts the rows it queues (Store.pendingRows) rather than
// counting the table at every commit. A write that rolls back leaves the
// count high, which only moves the rows sooner; every move resets it.

// addPending queues a record for both indexes.
func (t *txn) addPending(ctx context.Context, rid int64, r *custody.Record) error {
	if err := t.exec(ctx, `INSERT INTO index_pending (rid, norm) VALUES (?,?)`, rid, custody.GateText(r.Body, r.Key)); err != nil {
		return err
	}
	if t.pending != nil {
		*t.pending++
	}
	return nil
}

// unindex removes a record from both indexes, wherever it is.
func (t *txn) unindex(ctx context.Context, rid int64) error {
	res, err := t.ExecContext(ctx, `DELETE FROM index_pending WHERE rid = ?`, rid)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n > 0 {
		return err
	}
	if err := t.exec(ctx, `DELETE FROM records_fts WHERE rowid = ?`, rid); err != nil {
		return err
	}
	return t.exec(ctx, `DELETE FROM records_tri WHERE rowid = ?`, rid)
}

// flushPending moves every pending record into both indexes, one FTS5
// segment each for all of them, and reports whether there were any.
func (t *txn) flushPending(ctx context.Context) (bool, error) {
	res, err := t.ExecContext(ctx, `INSERT INTO records_fts (rowid, body, key)
 SELECT r.rid, custody_terms(r.body), custody_terms(r.key) FROM index_pending p JOIN records r ON r.rid = p.rid ORDER BY p.rid`)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	if err != nil || n == 0 {
		return false, err
	}
	if err := t.exec(ctx, `INSERT INTO records_tri (rowid, norm) SELECT rid, norm FROM index_pending ORDER BY rid`); err != nil {
		return false, err
	}
	if err := t.exec(ctx, `DELETE FROM index_pending`); err != nil {
		return false, err
	}
	if t.pending != nil {
		*t.pending = 0
	}
	return true, nil
}

// indexPending moves the pending records into the indexes, if any are
// waiting, through the writer.
func (s *Store) indexPending(ctx context.Context) error {
	var waiting bool
	if err := s.reader().QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM index_pending)`).Scan(&waiting); err != nil || !waiting {
		return err
	}
	return s.Update(ctx, func(tx custody.Tx) error {
		_, err := tx.(*txn).flushPending(ctx)
		return err
	})
}
