package sqlite

import (
	"context"
	"database/sql"
	"errors"

	custody "github.com/custody-mem/custody"
)

// txn implements custody.Tx over one SQL transaction: a read's Tx, or
// the writer's connection in a transaction (writer_conn.go).
type txn struct {
	tx    *sql.Tx
	wc    *writerConn // the writer's; tx is nil then
	ro    bool
	stmts *stmtCache
	known *known // what the writer knows (known.go); nil outside the writer
	// pending counts the writer's index_pending rows (pending.go); nil
	// outside the writer.
	pending *int
	local   map[string]*sql.Stmt // statements prepared in or bound to this transaction
	// ops are the changes this transaction made for the store's copy of
	// the search index, given to it once committed (search_index.go).
	ops   []indexOp
	reset bool // one of ops is a reset
	// firstRid and lastRid are the rids of the first and the last record
	// this transaction inserted (0: none), for the copy (searchPos).
	firstRid, lastRid int64
}

// stmt returns the statement for q in this transaction: the store's cached
// one, or one prepared on the transaction's own connection for the rest of
// it (database/sql closes it with the transaction; the cache gets q after).
func (t *txn) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	if t.wc != nil {
		return t.wc.stmt(ctx, q)
	}
	if st, ok := t.local[q]; ok {
		return st, nil
	}
	if st := t.stmts.lookup(q); st != nil {
		// Bound to the transaction once: a batch runs the same few
		// statements for each of its writes, and binding one costs
		// several locks and allocations in database/sql.
		bound := t.tx.StmtContext(ctx, st)
		if t.local == nil {
			t.local = map[string]*sql.Stmt{}
		}
		t.local[q] = bound
		return bound, nil
	}
	st, err := t.tx.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	if t.local == nil {
		t.local = map[string]*sql.Stmt{}
	}
	t.local[q] = st
	return st, nil
}

// uncancelled is ctx for a statement of the writer's transaction: without
// its cancellation. The driver watches a cancellable context with a
// goroutine of its own for each statement, and a writer's statement is
// short; the writer checks each write's context before running it, and a
// write's error rolls back only its own savepoint.
func (t *txn) uncancelled(ctx context.Context) context.Context {
	if t.known == nil || ctx.Done() == nil {
		return ctx
	}
	return context.WithoutCancel(ctx)
}

// QueryContext runs a query with a prepared statement (see stmt).
func (t *txn) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	ctx = t.uncancelled(ctx)
	st, err := t.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// QueryRowContext is QueryContext for one row.
func (t *txn) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	ctx = t.uncancelled(ctx)
	st, err := t.stmt(ctx, q)
	if err != nil {
		return t.raw().QueryRowContext(ctx, q, args...) // reports the same error
	}
	return st.QueryRowContext(ctx, args...)
}

// ExecContext runs a statement with a prepared statement (see stmt).
func (t *txn) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	if t.ro {
		return nil, errReadOnly
	}
	ctx = t.uncancelled(ctx)
	st, err := t.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

// rawConn is what a transaction runs its unprepared statements on.
type rawConn interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
	QueryRowContext(context.Context, string, ...any) *sql.Row
}

// raw is the transaction's own connection, for a statement run without
// the statement cache.
func (t *txn) raw() rawConn {
	if t.wc != nil {
		return t.wc.conn
	}
	return t.tx
}

var _ custody.Tx = (*txn)(nil)

var errReadOnly = errors.New("sqlite: write in a read-only transaction")

func (t *txn) exec(ctx context.Context, q string, args ...any) error {
	if t.ro {
		return errReadOnly
	}
	_, err := t.ExecContext(ctx, q, args...)
	return err
}
