package sqlite

import (
	"context"
	"database/sql"
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
	if err := t.exec(ctx, `INSERT INTO index_pending (rid, norm) VALUES (?,?)`, rid, custody.RecordGateIndex(r)); err != nil {
		return err
	}
	if t.pending != nil {
		*t.pending++
	}
	return nil
}

// unindex removes a record from both indexes, wherever it is; body, key
// and meta are the text and metadata it was indexed with.
func (t *txn) unindex(ctx context.Context, rid int64, body, key, meta string) error {
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
	t.changedIndex(indexOp{rid: rid, body: lexical.Document(body), key: lexical.Document(key), remove: true, at: postings.Place{Meta: meta}})
	return t.exec(ctx, `DELETE FROM records_tri WHERE rowid = ?`, rid)
}

// flushPending moves every pending record into both indexes, one FTS5
// segment each for all of them, and reports whether there were any. The
// search terms are found here, in Go, rather than by custody_terms in the
// insert, so that the store's copy of the index (search_index.go) gets
// the same terms without computing them again.
func (t *txn) flushPending(ctx context.Context) (bool, error) {
	rows, err := t.QueryContext(ctx, `SELECT p.rid, r.body, r.key, r.tenant, r.owner, r.audience, r.state, r.head, r.expires_at, r.namespace, r.class, r.created_at, r.metadata
 FROM index_pending p JOIN records r ON r.rid = p.rid ORDER BY p.rid`)
	if err != nil {
		return false, err
	}
	var ops []indexOp
	for rows.Next() {
		var op indexOp
		var body, key, tenant, owner, audience, state string
		var head bool
		var expires sql.NullInt64
		if err := rows.Scan(&op.rid, &body, &key, &tenant, &owner, &audience, &state, &head, &expires, &op.at.Namespace, &op.at.Class, &op.at.Created, &op.at.Meta); err != nil {
			rows.Close()
			return false, err
		}
		op.body, op.key, op.at.Key = lexical.Document(body), lexical.Document(key), key
		op.at.Part, op.at.Owner, op.at.Expires = searchPart(tenant, owner, audience, searchLive(state, head, key)), searchOwner(tenant, owner), expiresAt(expires)
		ops = append(ops, op)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(ops) == 0 {
		return false, err
	}
	for _, op := range ops {
		if err := t.exec(ctx, `INSERT INTO records_fts (rowid, body, key) VALUES (?,?,?)`,
			op.rid, strings.Join(op.body, " "), strings.Join(op.key, " ")); err != nil {
			return false, err
		}
		t.changedIndex(op)
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

// changedIndex notes a change to records_fts for the store's copy of it.
// After the whole index is deleted in this transaction (a reset), the copy
// is built again from scratch, so the records added after it are not kept.
func (t *txn) changedIndex(op indexOp) {
	if t.reset {
		return
	}
	t.reset = op.reset
	t.ops = append(t.ops, op)
}

// undoIndexChanges forgets the changes after the first n, which a
// savepoint rolled back.
func (t *txn) undoIndexChanges(n int) {
	t.ops = t.ops[:n]
	t.reset = slices.ContainsFunc(t.ops, func(op indexOp) bool { return op.reset })
}

// indexPending moves the pending records into the indexes, if any are
// waiting, through the writer, and returns the generation of the search
// index then (search_index.go).
func (s *Store) indexPending(ctx context.Context) (int64, error) {
	var waiting bool
	var gen int64
	if err := s.reader().QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM index_pending), (SELECT gen FROM search_generation)`).Scan(&waiting, &gen); err != nil || !waiting {
		return gen, err
	}
	err := s.Update(ctx, func(tx custody.Tx) error {
		_, err := tx.(*txn).flushPending(ctx)
		return err
	})
	if err != nil {
		return 0, err
	}
	err = s.reader().QueryRowContext(ctx, `SELECT gen FROM search_generation`).Scan(&gen)
	return gen, err
}
