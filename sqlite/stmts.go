package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"sync"
)

// stmtCache keeps one prepared statement per query text, so SQLite parses
// each query once per connection instead of on every call (parsing was a
// quarter of a write's CPU). Query texts are a small fixed set; the few
// built at run time vary only with the number of groups or states. The
// readers' pool has one; the writer keeps its statements on its own
// connection (writer_conn.go).
//
// A transaction never prepares into the cache: preparing takes a second
// connection of the pool while the transaction holds its own, and with the
// others busy that waits for ever (the writer's spare connection taken by
// an offline tool; every read connection held by a transaction that meets a
// new statement). A transaction prepares a statement the cache lacks on its
// own connection, for the rest of the transaction (a restore is one long
// transaction), and notes it; prepareMissing prepares the noted ones into
// the cache once the transaction is over.
type stmtCache struct {
	db      *sql.DB
	mu      sync.Mutex
	m       map[string]*sql.Stmt
	missing map[string]bool
}

func newStmtCache(db *sql.DB) *stmtCache {
	return &stmtCache{db: db, m: map[string]*sql.Stmt{}, missing: map[string]bool{}}
}

// lookup returns the statement for q, or nil after noting q as missing.
func (c *stmtCache) lookup(q string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.m[q]
	if !ok && c.m != nil {
		c.missing[q] = true
	}
	return st
}

// prepareMissing prepares the statements transactions ran without. The
// caller holds no connection of the pool.
func (c *stmtCache) prepareMissing(ctx context.Context) {
	c.mu.Lock()
	qs := make([]string, 0, len(c.missing))
	for q := range c.missing {
		qs = append(qs, q)
	}
	clear(c.missing)
	c.mu.Unlock()
	for _, q := range qs {
		c.get(ctx, q) // an error shows again, and is reported, when the query runs
	}
}

// get returns the statement for q, preparing it if needed. The caller
// holds no connection of the pool.
func (c *stmtCache) get(ctx context.Context, q string) (*sql.Stmt, error) {
	c.mu.Lock()
	st, ok := c.m[q]
	c.mu.Unlock()
	if ok {
		return st, nil
	}
	st, err := c.db.PrepareContext(context.WithoutCancel(ctx), q)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		st.Close()
		return nil, errClosed
	}
	if prev, ok := c.m[q]; ok { // prepared meanwhile by another caller
		st.Close()
		return prev, nil
	}
	c.m[q] = st
	return st, nil
}

var errClosed = errors.New("sqlite: the store is closed")

func (c *stmtCache) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for _, st := range c.m {
		errs = append(errs, st.Close())
	}
	c.m = nil
	return errors.Join(errs...)
}

// cachedDB runs queries outside transactions with cached statements.
type cachedDB struct{ c *stmtCache }

func (d cachedDB) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	st, err := d.c.get(ctx, q)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

func (d cachedDB) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	st, err := d.c.get(ctx, q)
	if err != nil {
		return d.c.db.QueryRowContext(ctx, q, args...) // reports the same error
	}
	return st.QueryRowContext(ctx, args...)
}

// reader is the read pool with cached statements.
func (s *Store) reader() cachedDB { return cachedDB{s.rstmts} }
