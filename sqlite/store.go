// Package sqlite is custody's embedded store: one SQLite file in WAL mode
// (modernc.org/sqlite, no cgo), with FTS5 for search and the Merkle log's
// leaves and tree nodes in the same database, so that a state change and its
// log entry commit in one transaction.
//
// Writes go through one connection (SQLite has one writer); reads use a
// small pool of read-only connections and see a consistent snapshot.
package sqlite

import (
	"context"
	"database/sql"
	_ "embed"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"

	custody "github.com/custody-mem/custody"
	_ "modernc.org/sqlite"
)

//go:embed schema.sql
var schema string

// Store is the SQLite backend.
type Store struct {
	path string
	w    *sql.DB // one connection: the writer
	r    *sql.DB // read-only pool
}

var _ custody.Store = (*Store)(nil)

// Open opens (creating if needed) the database at path.
func Open(ctx context.Context, path string) (*Store, error) {
	if dir := filepath.Dir(path); dir != "" {
		if _, err := os.Stat(dir); err != nil {
			return nil, fmt.Errorf("opening store %s: directory %s: %w", path, dir, err)
		}
	}
	dsn := func(extra string) string {
		q := url.Values{}
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "busy_timeout(10000)")
		q.Add("_pragma", "synchronous(NORMAL)")
		q.Add("_pragma", "foreign_keys(1)")
		if extra != "" {
			q.Add("_pragma", extra)
		}
		return "file:" + path + "?" + q.Encode()
	}
	w, err := sql.Open("sqlite", dsn("")+"&_txlock=immediate")
	if err != nil {
		return nil, err
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	if _, err := w.ExecContext(ctx, schema); err != nil {
		w.Close()
		return nil, fmt.Errorf("opening store %s: %w (is it a custody database?)", path, err)
	}
	r, err := sql.Open("sqlite", dsn("query_only(1)"))
	if err != nil {
		w.Close()
		return nil, err
	}
	n := max(4, runtime.NumCPU()*2)
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	return &Store{path: path, w: w, r: r}, nil
}

// Close closes the database.
func (s *Store) Close() error {
	return errors.Join(s.r.Close(), s.w.Close())
}

// Path is the database file.
func (s *Store) Path() string { return s.path }

// DB exposes the writer connection for offline tools and tests that need
// raw access (tamper tests, benchmarks).
func (s *Store) DB() *sql.DB { return s.w }

// Update runs fn in one write transaction.
func (s *Store) Update(ctx context.Context, fn func(custody.Tx) error) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return unavailable(err)
	}
	if err := fn(&txn{tx: tx}); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return unavailable(err)
	}
	return nil
}

// View runs fn in a read-only transaction.
func (s *Store) View(ctx context.Context, fn func(custody.Tx) error) error {
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return unavailable(err)
	}
	defer tx.Rollback()
	return fn(&txn{tx: tx, ro: true})
}

func unavailable(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("%w: %w", custody.ErrUnavailable, err)
}
