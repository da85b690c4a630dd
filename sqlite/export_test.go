package sqlite

import (
	"context"
	"database/sql/driver"
	"maps"
	"slices"
	"time"

	custody "github.com/custody-mem/custody"
)

// CachedQueries returns the texts of the statements the store keeps
// prepared, the writer's (read on the writer's goroutine) and the
// readers'. The readers' cache prepares a transaction's new statements
// after it: call this after one more View.
func CachedQueries(s *Store) []string {
	var qs []string
	if err := s.Update(context.Background(), func(tx custody.Tx) error {
		qs = append(qs, slices.Collect(maps.Keys(tx.(*txn).wc.stmts))...)
		return nil
	}); err != nil {
		panic(err)
	}
	s.rstmts.mu.Lock()
	qs = append(qs, slices.Collect(maps.Keys(s.rstmts.m))...)
	s.rstmts.mu.Unlock()
	return qs
}

// SchemaVersion is the schema version this package writes.
const SchemaVersion = schemaVersion

// OpenUntidied opens a store whose writer does not tidy while the test
// runs, so that what it leaves pending stays pending.
func OpenUntidied(ctx context.Context, path string) (*Store, error) {
	return open(ctx, path, time.Hour, Options{})
}

// OpenUntidiedFTS is OpenUntidied with no copy of the search index in
// memory: FTS5 ranks every search.
func OpenUntidiedFTS(ctx context.Context, path string) (*Store, error) {
	return open(ctx, path, time.Hour, Options{SearchMemory: -1})
}

// CommitBatch runs fns as one batch of the writer, each in its savepoint
// and all in one commit, as concurrent writes are, and returns their
// errors. Only for a store opened with OpenUntidied, with no other write
// running.
func CommitBatch(ctx context.Context, s *Store, fns ...func(custody.Tx) error) []error {
	batch := make([]*write, len(fns))
	for i, fn := range fns {
		batch[i] = &write{ctx: ctx, fn: fn, done: make(chan error, 1)}
	}
	s.commit(ctx, batch)
	errs := make([]error, len(fns))
	for i, w := range batch {
		errs[i] = <-w.done
	}
	return errs
}

// BreakWriterConn makes database/sql give up on the writer's connection,
// as it does when a driver reports it bad. Only for a store opened with
// OpenUntidied, with no write running.
func BreakWriterConn(s *Store) error {
	return s.wc.conn.Raw(func(any) error { return driver.ErrBadConn })
}

// TruncateWAL checkpoints the whole WAL into the database file and
// truncates it, holding the lock the store's own checkpoints take (SQLite
// gives up at once on a checkpoint while another runs), and reports
// whether a reader or writer kept it from finishing.
func TruncateWAL(ctx context.Context, s *Store) (busy bool, err error) {
	s.ckptMu.Lock()
	defer s.ckptMu.Unlock()
	var b, frames, copied int
	err = s.w.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&b, &frames, &copied)
	return b != 0, err
}
