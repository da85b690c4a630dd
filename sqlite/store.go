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
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/internal/factsmemo"
	_ "modernc.org/sqlite"
)

//go:embed schema.sql
var schema string

// Store is the SQLite backend.
type Store struct {
	path        string
	writes      chan *write // to the group-commit writer
	cancel      context.CancelFunc
	wg          sync.WaitGroup
	w           *sql.DB // the writer's pool: wc's connection, and a spare for DB()
	wc          *writerConn
	r           *sql.DB        // read-only pool
	ckpt        *sql.DB        // the checkpointer's connection
	ckptMu      sync.Mutex     // one checkpoint at a time: the checkpointer's or the writer's (wal.go)
	pv          *versionReader // reads the principals version (principals_version.go)
	rstmts      *stmtCache
	known       known // what the writer knows between transactions (known.go)
	pendingRows int   // rows in index_pending as the writer counts them (pending.go)
	// walRetryAt and walRetryAfter are the WAL size and time from which
	// the writer resets the WAL next (wal.go).
	walRetryAt    int64
	walRetryAfter time.Time
	// scrubPending is set while an erasure's WAL truncation waits for
	// readers (scrub.go).
	scrubPending bool
	// tidyAfter is how long the writer waits idle before tidying.
	tidyAfter time.Duration
	// lastTidySearches is the rankings made as the last tidy step began
	// (tidyPaced; the writer's).
	lastTidySearches int64
	closed           <-chan struct{} // closed by Close
	bg               context.Context // the background goroutines', cancelled by Close
	search           searchIndex     // the copy of the search index in memory (search_index.go)
	facts            factsmemo.Memo  // ids of records read and found to be no episode
	// commits and committed count the writer's transactions and the
	// writes they took (CommitStats).
	commits, committed atomic.Int64
	// lastBatch is how many writes the writer's last commit took (writer.go).
	lastBatch int
}

var _ custody.Store = (*Store)(nil)

// Options tune a store; the zero value is what Open gives.
type Options struct {
	// SearchMemory bounds the memory that the copy of the search index
	// in memory may hold (search_index.go): 0 is DefaultSearchMemory; a
	// negative bound keeps no copy, and FTS5 ranks every search.
	SearchMemory int64
}

// Open opens (creating if needed) the database at path.
func Open(ctx context.Context, path string) (*Store, error) {
	return open(ctx, path, tidyAfter, Options{})
}

// OpenWith is Open with options.
func OpenWith(ctx context.Context, path string, o Options) (*Store, error) {
	return open(ctx, path, tidyAfter, o)
}

// open is OpenWith with the writer's idle time before tidying.
func open(ctx context.Context, path string, idle time.Duration, o Options) (*Store, error) {
	if dir := filepath.Dir(path); dir != "" {
		if _, err := os.Stat(dir); err != nil {
			return nil, fmt.Errorf("opening store %s: directory %s: %w", path, dir, err)
		}
	}
	if err := prepareFiles(path); err != nil { // mode.go
		return nil, err
	}
	dsn := func(extra string) string {
		q := url.Values{}
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "busy_timeout("+strconv.FormatInt(busyTimeout.Milliseconds(), 10)+")")
		q.Add("_pragma", "synchronous(NORMAL)")
		q.Add("_pragma", "foreign_keys(1)")
		q.Add("_pragma", "mmap_size("+strconv.FormatInt(mmapSize, 10)+")")
		if extra != "" {
			q.Add("_pragma", extra)
		}
		return "file:" + path + "?" + q.Encode()
	}
	// The writer does not checkpoint inside its commits (that took
	// milliseconds inside one commit in sixty): the checkpointer does,
	// beside it, and the writer resets the WAL between commits (wal.go).
	w, err := sql.Open("sqlite", dsn("wal_autocheckpoint(0)")+walLimitPragma+"&_pragma=cache_size(-2048)&_pragma=temp_store(MEMORY)&_pragma=secure_delete(1)&_txlock=immediate")
	if err != nil {
		return nil, err
	}
	// The writer goroutine keeps one connection (its data_version must come
	// from the same connection every time, see known.go); the others serve
	// statement preparation and the offline tools and tests that use DB
	// while the store is open.
	w.SetMaxOpenConns(3)
	w.SetMaxIdleConns(3)
	w.SetConnMaxLifetime(0)
	if err := migrate(ctx, w); err != nil {
		w.Close()
		return nil, fmt.Errorf("opening store %s: %w (is it a custody database?)", path, err)
	}
	wconn, err := w.Conn(ctx)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("opening store %s: %w", path, err)
	}
	r, err := sql.Open("sqlite", dsn("query_only(1)")+"&_pragma=cache_size(-"+strconv.Itoa(readerCacheKiB(path))+")")
	if err != nil {
		wconn.Close()
		w.Close()
		return nil, err
	}
	n := max(4, runtime.NumCPU()*2)
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	c, err := sql.Open("sqlite", dsn(""))
	if err != nil {
		wconn.Close()
		w.Close()
		r.Close()
		return nil, err
	}
	c.SetMaxOpenConns(1)
	pv, err := openVersionReader(path)
	if err != nil {
		wconn.Close()
		w.Close()
		r.Close()
		c.Close()
		return nil, err
	}
	st := &Store{path: path, w: w, wc: newWriterConn(wconn), r: r, ckpt: c, pv: pv, rstmts: newStmtCache(r), writes: make(chan *write), tidyAfter: idle}
	bg, cancel := context.WithCancel(context.Background())
	st.cancel = cancel
	st.closed = bg.Done()
	st.bg = bg
	st.search.limit = o.SearchMemory
	if o.SearchMemory == 0 {
		st.search.limit = DefaultSearchMemory
	}
	st.search.texts.limit = searchTextsLimit(st.search.limit)
	st.wg.Add(2)
	go func() { defer st.wg.Done(); st.writer(bg) }()
	go func() { defer st.wg.Done(); st.checkpointer(bg) }()
	return st, nil
}

// Close closes the database.
func (s *Store) Close() error {
	s.search.mu.Lock()
	s.search.closed = true // no build starts after this
	s.search.mu.Unlock()
	s.cancel()
	s.wg.Wait()
	return errors.Join(s.rstmts.close(), s.pv.close(), s.wc.close(), s.r.Close(), s.ckpt.Close(), s.w.Close())
}

// Path is the database file.
func (s *Store) Path() string { return s.path }

// DB exposes the writer connection for offline tools and tests that need
// raw access (tamper tests, benchmarks).
func (s *Store) DB() *sql.DB { return s.w }

// Update runs fn in one write transaction: with other concurrent writes
// it shares a commit (group commit), but each runs inside its own savepoint,
// so an error from fn rolls back fn's changes only.
func (s *Store) Update(ctx context.Context, fn func(custody.Tx) error) error {
	w := &write{ctx: ctx, fn: fn, done: make(chan error, 1)}
	select {
	case s.writes <- w:
	case <-ctx.Done():
		return ctx.Err()
	case <-s.closed:
		return unavailable(errClosed)
	}
	return <-w.done // the writer always answers, even for a cancelled ctx
}

// View runs fn in a read-only transaction.
func (s *Store) View(ctx context.Context, fn func(custody.Tx) error) error {
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return unavailable(err)
	}
	err = func() error {
		defer tx.Rollback()
		return fn(&txn{tx: tx, ro: true, stmts: s.rstmts})
	}()
	s.rstmts.prepareMissing(ctx) // with the transaction's connection back in the pool
	return err
}

func unavailable(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("%w: %w", custody.ErrUnavailable, err)
}

// readerCacheKiB is the page cache of each reader connection, in KiB: a
// sixteenth of the store's file as it opens, between 1 and 4 MiB. A
// small store's searches read few pages (and each commit of the writer
// empties the readers' caches), so its server stays small; a large
// store's keep more of the pages they read.
func readerCacheKiB(path string) int {
	var size int64
	if fi, err := os.Stat(path); err == nil {
		size = fi.Size()
	}
	return int(min(4096, max(1024, size/16/1024)))
}
