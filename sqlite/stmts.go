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
// built at run time vary only with the number of groups or states.
type stmtCache struct {
	db *sql.DB
	mu sync.Mutex
	m  map[string]*sql.Stmt
}

func newStmtCache(db *sql.DB) *stmtCache { return &stmtCache{db: db, m: map[string]*sql.Stmt{}} }

func (c *stmtCache) get(ctx context.Context, q string) (*sql.Stmt, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.m[q]; ok {
		return st, nil
	}
	st, err := c.db.PrepareContext(context.WithoutCancel(ctx), q)
	if err != nil {
		return nil, err
	}
	c.m[q] = st
	return st, nil
}

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
