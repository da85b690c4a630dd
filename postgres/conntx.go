package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// connTx is a write batch's transaction on one pooled connection, begun
// and ended by statements that travel with others: BEGIN goes in the
// pipeline of the transaction's first batch of statements (the lock and
// its reads, tenantstate.go) and COMMIT in that of a lone write's closing
// inserts (commitAfter), so that a write alone is three round trips
// where a pgx.Tx makes it five. A rollback when the server says no
// transaction is open costs nothing.
type connTx struct {
	c     *pgxpool.Conn
	begun bool // BEGIN was sent
}

const beginSQL = "BEGIN ISOLATION LEVEL READ COMMITTED"

var _ pgx.Tx = (*connTx)(nil)

// begin sends BEGIN on its own, before a statement that cannot carry it.
func (t *connTx) begin(ctx context.Context) error {
	if t.begun {
		return nil
	}
	t.begun = true
	_, err := t.c.Exec(ctx, beginSQL)
	return err
}

func (t *connTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if err := t.begin(ctx); err != nil {
		return pgconn.CommandTag{}, err
	}
	return t.c.Exec(ctx, sql, args...)
}

func (t *connTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if err := t.begin(ctx); err != nil {
		return nil, err
	}
	return t.c.Query(ctx, sql, args...)
}

func (t *connTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if err := t.begin(ctx); err != nil {
		return errRow{err}
	}
	return t.c.QueryRow(ctx, sql, args...)
}

// SendBatch sends b, after BEGIN when the transaction has not begun.
func (t *connTx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	if t.begun {
		return t.c.SendBatch(ctx, b)
	}
	t.begun = true
	all := &pgx.Batch{}
	all.Queue(beginSQL)
	for _, q := range b.QueuedQueries {
		all.Queue(q.SQL, q.Arguments...)
	}
	return &afterPending{BatchResults: t.c.SendBatch(ctx, all), pending: 1}
}

func (t *connTx) CopyFrom(ctx context.Context, table pgx.Identifier, cols []string, src pgx.CopyFromSource) (int64, error) {
	if err := t.begin(ctx); err != nil {
		return 0, err
	}
	return t.c.CopyFrom(ctx, table, cols, src)
}

func (t *connTx) Prepare(ctx context.Context, name, sql string) (*pgconn.StatementDescription, error) {
	return t.c.Conn().Prepare(ctx, name, sql)
}

func (t *connTx) Conn() *pgx.Conn { return t.c.Conn() }

// LargeObjects is not used by custody.
func (t *connTx) LargeObjects() pgx.LargeObjects { return pgx.LargeObjects{} }

// Begin is not used: a write's savepoints are statements (writer.go).
func (t *connTx) Begin(context.Context) (pgx.Tx, error) {
	return nil, errors.New("postgres: a write batch opens savepoints by statement, not by Begin")
}

// Commit commits the transaction (nothing when it never began).
func (t *connTx) Commit(ctx context.Context) error {
	_, err := t.commitAfter(ctx, nil)
	return err
}

// commitAfter sends the statements of pending, then COMMIT, in one round
// trip. stmtErr is the failure of one of pending's statements (the
// transaction is then not committed and is to be rolled back); err that
// of the commit.
func (t *connTx) commitAfter(ctx context.Context, pending *pgx.Batch) (err, stmtErr error) {
	if !t.begun {
		return nil, nil
	}
	b := &pgx.Batch{}
	if pending != nil {
		for _, q := range pending.QueuedQueries {
			b.Queue(q.SQL, q.Arguments...)
		}
	}
	n := b.Len()
	b.Queue("COMMIT")
	br := t.c.SendBatch(ctx, b)
	defer br.Close()
	for range n {
		if _, err := br.Exec(); err != nil {
			return nil, classify(err)
		}
	}
	tag, err := br.Exec()
	if err != nil {
		return err, nil
	}
	if tag.String() == "ROLLBACK" { // the transaction had failed
		return pgx.ErrTxCommitRollback, nil
	}
	return nil, nil
}

// Rollback rolls back what the transaction left open, if anything.
func (t *connTx) Rollback(ctx context.Context) error {
	if !t.begun || t.c.Conn().PgConn().TxStatus() == 'I' {
		return nil
	}
	_, err := t.c.Exec(ctx, "ROLLBACK")
	return err
}
