package sqlite

import "context"

// FTS5 writes its pending rows out as a new segment at every SAVEPOINT, and
// the writer runs each write of a batch in its own savepoint: every write
// of a batch paid for a segment of its own, and for merging it later. So
// while a batch runs, the writer queues the search index's inserts and
// deletes, forgets those of a write that rolls back, and applies the rest
// after the last savepoint, where FTS5 flushes them once, at the commit.
// Nothing reads the search index inside a write transaction.
type searchQueue struct {
	ops []searchOp
}

type searchOp struct {
	rid       int64
	body, key string
	del       bool
}

func (q *searchQueue) mark() int { return len(q.ops) }

// rollback forgets the operations queued since mark.
func (q *searchQueue) rollback(mark int) { q.ops = q.ops[:mark] }

// addSearch indexes a record's body and key for search, now or, in a
// batch, once the batch's writes are done.
func (t *txn) addSearch(ctx context.Context, rid int64, body, key string) error {
	if t.search != nil {
		t.search.ops = append(t.search.ops, searchOp{rid: rid, body: body, key: key})
		return nil
	}
	return t.exec(ctx, `INSERT INTO records_fts (rowid, body, key) VALUES (?,?,?)`, rid, body, key)
}

// dropSearch removes a record from the search index, now or, in a batch,
// once the batch's writes are done.
func (t *txn) dropSearch(ctx context.Context, rid int64) error {
	if t.search != nil {
		t.search.ops = append(t.search.ops, searchOp{rid: rid, del: true})
		return nil
	}
	return t.exec(ctx, `DELETE FROM records_fts WHERE rowid = ?`, rid)
}

// flushSearch applies the queue: a delete cancels the queued insert of its
// record, or removes a row indexed before the batch.
func (t *txn) flushSearch(ctx context.Context) error {
	q := t.search
	t.search = nil           // from here addSearch and dropSearch write through
	added := map[int64]int{} // rid → its queued insert
	skip := map[int]bool{}
	var dels []int64
	for i, op := range q.ops {
		switch j, ok := added[op.rid]; {
		case !op.del:
			added[op.rid] = i
		case ok:
			skip[j] = true
			delete(added, op.rid)
		default:
			dels = append(dels, op.rid)
		}
	}
	for _, rid := range dels {
		if err := t.dropSearch(ctx, rid); err != nil {
			return err
		}
	}
	for i, op := range q.ops {
		if !op.del && !skip[i] {
			if err := t.addSearch(ctx, op.rid, op.body, op.key); err != nil {
				return err
			}
		}
	}
	return nil
}
