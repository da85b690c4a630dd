package sqlite

import (
	"context"
	"slices"
	"strings"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/internal/lexical"
	"github.com/custody-mem/custody/internal/postings"
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
//   - before a search that FTS5 ranks (the copy in memory is off, being
//     built or stale), which must rank over every record written before it.
//
// The store's copy of the search index takes each record at its write's
// commit, pending or not (search_index.go), so a search it ranks never
// waits for the move. (Before, every search right after a write moved the
// pending records first, a commit of its own through the writer: 0.6 ms of
// a lexical search's 0.9 ms right after a write at 100k records.)
//
// The gate does not wait: it scans index_pending beside records_tri (instr
// on the same normalised text, the same substring test); pendingFlushRows
// bounds the rows it scans that way.
const pendingFlushRows = 256

// The writer counts the rows it queues (Store.pendingRows) rather than
// counting the table at every commit. A write that rolls back leaves the
// count high, which only moves the rows sooner; every move resets it.

// addPending queues a record for both indexes, and gives it to the copy
// of the search index at the commit.
func (t *txn) addPending(ctx context.Context, rid int64, r *custody.Record) error {
	if err := t.exec(ctx, `INSERT INTO index_pending (rid, norm) VALUES (?,?)`, rid, custody.RecordGateIndex(r)); err != nil {
		return err
	}
	if t.pending != nil {
		*t.pending++
	}
	t.changedIndex(indexOp{rid: rid, body: lexical.Document(r.Body), key: lexical.Document(r.Key), at: insertedPlace(r)})
	return nil
}

// insertedPlace is where a record is in the copy as it is inserted, with
// the head flag InsertRecord gives it (a trigger that corrects the flag
// moves it: search_moves.go).
func insertedPlace(r *custody.Record) postings.Place {
	var expires int64
	if r.ExpiresAt != nil {
		expires = r.ExpiresAt.UnixNano()
	}
	return postings.Place{
		Part:  searchPart(r.Tenant, r.Owner, r.Audience, searchLive(string(r.State), insertedHead(r), r.Key)),
		Owner: searchOwner(r.Tenant, r.Owner), Namespace: r.Namespace, Class: string(r.Class),
		Created: r.CreatedAt.UnixNano(), Expires: expires, Key: r.Key, Meta: r.Metadata.JSON(),
	}
}

// insertedHead is the head flag a record is inserted with: a keyed
// admitted record is almost always its key's newest version, and the
// trigger records_head_insert corrects the flag when it is not.
func insertedHead(r *custody.Record) bool { return r.Key != "" && r.State == custody.StateAdmitted }

// unindex removes a record from both indexes, wherever it is; body, key
// and meta are the text and metadata it was indexed with.
func (t *txn) unindex(ctx context.Context, rid int64, body, key, meta string) error {
	res, err := t.ExecContext(ctx, `DELETE FROM index_pending WHERE rid = ?`, rid)
	if err != nil {
		return err
	}
	// The copy holds it either way.
	t.changedIndex(indexOp{rid: rid, body: lexical.Document(body), key: lexical.Document(key), remove: true, at: postings.Place{Meta: meta}})
	if n, err := res.RowsAffected(); err != nil || n > 0 {
		return err
	}
	if err := t.exec(ctx, `DELETE FROM records_fts WHERE rowid = ?`, rid); err != nil {
		return err
	}
	return t.exec(ctx, `DELETE FROM records_tri WHERE rowid = ?`, rid)
}

// flushPending moves every pending record into both indexes, one FTS5
// segment each for all of them, and reports whether there were any. The
// copy of the search index holds them already (addPending): nothing
// changes for it.
func (t *txn) flushPending(ctx context.Context) (bool, error) {
	rows, err := t.QueryContext(ctx, `SELECT p.rid, r.body, r.key FROM index_pending p JOIN records r ON r.rid = p.rid ORDER BY p.rid`)
	if err != nil {
		return false, err
	}
	type pendingRow struct {
		rid       int64
		body, key string
	}
	var moved []pendingRow
	for rows.Next() {
		var p pendingRow
		if err := rows.Scan(&p.rid, &p.body, &p.key); err != nil {
			rows.Close()
			return false, err
		}
		moved = append(moved, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(moved) == 0 {
		return false, err
	}
	for _, p := range moved {
		if err := t.exec(ctx, `INSERT INTO records_fts (rowid, body, key) VALUES (?,?,?)`,
			p.rid, strings.Join(lexical.Document(p.body), " "), strings.Join(lexical.Document(p.key), " ")); err != nil {
			return false, err
		}
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

// changedIndex notes a change for the store's copy of the search index.
// After the whole index is deleted in this transaction (a reset), the copy
// is built again from scratch, so the records added after it are not kept.
func (t *txn) changedIndex(op indexOp) {
	if t.reset {
		return
	}
	t.reset = op.reset
	t.ops = append(t.ops, op)
}

// indexMark is where a transaction's changes for the copy stood: a
// savepoint rolls back to one (undoIndexChanges).
type indexMark struct {
	ops               int
	firstRid, lastRid int64
}

func (t *txn) indexMark() indexMark { return indexMark{len(t.ops), t.firstRid, t.lastRid} }

// undoIndexChanges forgets the changes after m, which a savepoint rolled
// back: the records inserted since free their rids, which the next
// insert takes again.
func (t *txn) undoIndexChanges(m indexMark) {
	t.ops, t.firstRid, t.lastRid = t.ops[:m.ops], m.firstRid, m.lastRid
	t.reset = slices.ContainsFunc(t.ops, func(op indexOp) bool { return op.reset })
}

// searchAt is the position of the search index (search_index.go) a
// search reads before it ranks: the copy ranks it once it holds that
// position, pending records and all.
func (s *Store) searchAt(ctx context.Context) (searchPos, error) {
	return readSearchPos(ctx, s.reader())
}

// pendingToFTS moves the pending records into the indexes, if any are
// waiting, through the writer: FTS5 is about to rank a search, and must
// rank over every record written before it.
func (s *Store) pendingToFTS(ctx context.Context) error {
	var waiting bool
	if err := s.reader().QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM index_pending)`).Scan(&waiting); err != nil || !waiting {
		return err
	}
	return s.Update(ctx, func(tx custody.Tx) error {
		_, err := tx.(*txn).flushPending(ctx)
		return err
	})
}
