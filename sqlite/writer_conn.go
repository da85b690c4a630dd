package sqlite

import (
	"context"
	"database/sql"
	"errors"
)

// writerConn is the writer's connection and the statements prepared on
// it, kept from one transaction to the next. The writer runs its
// transactions on the connection itself, not through database/sql's Tx:
// a Tx begins and commits with statements parsed anew each time, and
// binds each cached statement to itself once per transaction, several
// locks and allocations each. With ten statements a transaction, that was
// 25 to 35 µs of every commit (a Tx 64–76 µs against 39 µs on the
// connection, in a benchmark of ten inserts a commit).
//
// Only the writer's goroutine uses it, between and inside its
// transactions; a connection database/sql gives up on is replaced with
// its statements (Store.begin).
type writerConn struct {
	conn  *sql.Conn
	stmts map[string]*sql.Stmt
}

// maxWriterStmts bounds the statements kept: the writer's are a small
// fixed set, and a few built at run time vary with a count (nodes of an
// append, ids of a batch); past the bound, all are prepared again.
const maxWriterStmts = 1024

func newWriterConn(c *sql.Conn) *writerConn {
	return &writerConn{conn: c, stmts: map[string]*sql.Stmt{}}
}

// stmt returns q prepared on the connection.
func (c *writerConn) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	if st, ok := c.stmts[q]; ok {
		return st, nil
	}
	if len(c.stmts) >= maxWriterStmts {
		c.closeStmts()
	}
	st, err := c.conn.PrepareContext(context.WithoutCancel(ctx), q)
	if err != nil {
		return nil, err
	}
	c.stmts[q] = st
	return st, nil
}

// run runs q, a statement without arguments or rows (BEGIN, COMMIT).
func (c *writerConn) run(ctx context.Context, q string) error {
	st, err := c.stmt(ctx, q)
	if err != nil {
		return err
	}
	_, err = st.ExecContext(context.WithoutCancel(ctx))
	return err
}

// begin starts a transaction that holds the write lock from its start
// (the pool's _txlock=immediate, as database/sql's BeginTx did).
func (c *writerConn) begin(ctx context.Context) error { return c.run(ctx, "BEGIN IMMEDIATE") }

// commit commits the transaction. One that fails to commit is rolled
// back, should SQLite have left it open (a busy commit does), so that the
// next begin finds none.
func (c *writerConn) commit(ctx context.Context) error {
	err := c.run(ctx, "COMMIT")
	if err != nil {
		c.rollback(ctx)
	}
	return err
}

// rollback rolls the transaction back; there may be none left to roll
// back (SQLite rolls back by itself on some errors), which is no error.
func (c *writerConn) rollback(ctx context.Context) {
	c.run(ctx, "ROLLBACK")
}

func (c *writerConn) closeStmts() error {
	var errs []error
	for q, st := range c.stmts {
		errs = append(errs, st.Close())
		delete(c.stmts, q)
	}
	return errors.Join(errs...)
}

// close closes the statements and gives the connection back; a
// connection database/sql has closed meanwhile is abandoned instead.
func (c *writerConn) close() error {
	if err := c.conn.Raw(func(any) error { return nil }); err != nil {
		c.abandon()
		return nil
	}
	return errors.Join(c.closeStmts(), c.conn.Close())
}

// abandon lets go of a connection database/sql has given up on and
// closed: its statements went with it (database/sql does not track the
// statements prepared on a Conn, and finalizing one of a closed
// connection is a use after free in the driver), so they are dropped,
// not closed.
func (c *writerConn) abandon() {
	c.stmts = nil
	c.conn.Close()
}
