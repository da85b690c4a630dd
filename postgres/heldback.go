package postgres

import (
	"context"

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
}

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
	return classify(t.Tx.SendBatch(t.ctx, &b).Close())
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
		br := t.Tx.SendBatch(t.ctx, &all)
		return &afterPending{BatchResults: br, pending: all.Len() - b.Len()}
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
	err     error
}

func (r *afterPending) skip() error {
	for ; r.pending > 0 && r.err == nil; r.pending-- {
		if _, err := r.BatchResults.Exec(); err != nil {
			r.err = classify(err)
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
