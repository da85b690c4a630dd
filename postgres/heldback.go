package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Held-back statements. A write ends with inserts whose results are no
// more than an error (the record, its edges, its log leaf): they are
// queued and sent together, in one round trip, with the write's next
// statement or at its end (writer.go), where a lone write's travel with
// its COMMIT (conntx.go).

// laterExec is a transaction that can hold statements back (batchTx).
type laterExec interface {
	execLater(sql string, args ...any)
}

// execLater runs q, or queues it when the transaction can hold it back
// to send with its next statement: only for a statement whose result is
// no more than an error, which then fails the write at its next statement
// or its end, and which nothing in the write inspects.
func (t *txn) execLater(ctx context.Context, q string, args ...any) error {
	if t.ro {
		return errReadOnly
	}
	if l, ok := t.tx.(laterExec); ok {
		l.execLater(q, args...)
		return nil
	}
	return t.exec(ctx, q, args...)
}

// batchTx runs a write's statements under its batch's context, whatever
// context the write passes (see batchTimeout), and holds back the inserts
// a write ends with (execLater) until its next statement or its end, to
// send them in one round trip.
type batchTx struct {
	pgx.Tx
	ctx     context.Context
	pending pgx.Batch
	// carried is how many of pending's first statements the write before
	// in the batch held back (writer.go): they go with this write's first
	// statement, and their error is that write's (carryErr), while this
	// write's statement fails with errCarried.
	carried  int
	carryErr error
}

// errCarried fails a write's statement sent after statements of the write
// before that failed: the writer undoes that write and runs this one again.
var errCarried = errors.New("postgres: a statement of the write before in the batch failed; this write runs again")

// execLater queues a statement whose result only matters as an error.
// The error is that of the statement run next, or of the write's end
// (writer.go): either way the write fails, as if the statement had.
func (t *batchTx) execLater(sql string, args ...any) {
	t.pending.Queue(sql, args...)
}

// flush runs the queued statements in one round trip.
func (t *batchTx) flush() error {
	if t.pending.Len() == 0 {
		return nil
	}
	b := t.pending
	t.pending = pgx.Batch{}
	r := t.results(t.Tx.SendBatch(t.ctx, &b), b.Len())
	err := r.skip()
	if cerr := r.BatchResults.Close(); err == nil && cerr != nil {
		err = classify(cerr)
	}
	return err
}

// results is br, whose first n statements were the queued ones.
func (t *batchTx) results(br pgx.BatchResults, n int) *afterPending {
	r := &afterPending{BatchResults: br, pending: n, carried: t.carried, tx: t}
	t.carried = 0
	return r
}

// Exec and QueryRow send the queued statements first, in the same round
// trip: their first error is the statement's.
func (t *batchTx) Exec(_ context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if t.pending.Len() == 0 {
		return t.Tx.Exec(t.ctx, sql, args...)
	}
	br := t.after(sql, args)
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil && cerr != nil {
		err = cerr
	}
	return tag, err
}

func (t *batchTx) Query(_ context.Context, sql string, args ...any) (pgx.Rows, error) {
	if err := t.flush(); err != nil {
		return nil, err
	}
	return t.Tx.Query(t.ctx, sql, args...)
}

func (t *batchTx) QueryRow(_ context.Context, sql string, args ...any) pgx.Row {
	if t.pending.Len() == 0 {
		return t.Tx.QueryRow(t.ctx, sql, args...)
	}
	return batchRow{t.after(sql, args)}
}

// after sends the queued statements and then sql.
func (t *batchTx) after(sql string, args []any) pgx.BatchResults {
	b := &pgx.Batch{}
	b.Queue(sql, args...)
	return t.SendBatch(t.ctx, b)
}

// batchRow is the one row of a statement sent after queued ones.
type batchRow struct{ br pgx.BatchResults }

func (r batchRow) Scan(dest ...any) error {
	err := r.br.QueryRow().Scan(dest...)
	if cerr := r.br.Close(); err == nil && cerr != nil {
		err = cerr
	}
	return err
}

func (t *batchTx) SendBatch(_ context.Context, b *pgx.Batch) pgx.BatchResults {
	if t.pending.Len() > 0 { // the queued statements go first, in the same round trip
		all := t.pending
		t.pending = pgx.Batch{}
		for _, q := range b.QueuedQueries {
			all.Queue(q.SQL, q.Arguments...)
		}
		return t.results(t.Tx.SendBatch(t.ctx, &all), all.Len()-b.Len())
	}
	return t.Tx.SendBatch(t.ctx, b)
}

func (t *batchTx) CopyFrom(_ context.Context, table pgx.Identifier, cols []string, src pgx.CopyFromSource) (int64, error) {
	if err := t.flush(); err != nil {
		return 0, err
	}
	return t.Tx.CopyFrom(t.ctx, table, cols, src)
}

// afterPending is the results of a batch sent after queued statements:
// their results are read, and their first error returned, before the
// batch's own.
type afterPending struct {
	pgx.BatchResults
	pending int
	carried int // of pending, the first ones, the write before's
	tx      *batchTx
	err     error
}

func (r *afterPending) skip() error {
	for ; r.pending > 0 && r.err == nil; r.pending-- {
		before := r.carried > 0
		if before {
			r.carried--
		}
		if _, err := r.BatchResults.Exec(); err != nil {
			r.err = classify(err)
			if before {
				r.tx.carryErr, r.err = r.err, errCarried
			}
		}
	}
	return r.err
}

func (r *afterPending) Exec() (pgconn.CommandTag, error) {
	if err := r.skip(); err != nil {
		return pgconn.CommandTag{}, err
	}
	return r.BatchResults.Exec()
}

func (r *afterPending) Query() (pgx.Rows, error) {
	if err := r.skip(); err != nil {
		return nil, err
	}
	return r.BatchResults.Query()
}

func (r *afterPending) QueryRow() pgx.Row {
	if err := r.skip(); err != nil {
		return errRow{err}
	}
	return r.BatchResults.QueryRow()
}

// errRow is a row that fails with err.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }
