package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
)

// versionReader reads the principals version (schema.sql) on a connection
// of its own, outside any transaction, so that it sees the latest commit of
// any connection or process. Every authenticated request reads it, so the
// connection maps no memory: a connection that maps the file remaps it
// at its first read after the file grew, which a server writing all the
// time makes every read of a pooled connection pay (about as much as the
// token lookup the version read replaces). Here a read after a write costs
// a look at the WAL index and the read of one page.
//
// Concurrent requests share reads. A request needs a read that begins
// after it does (a change committed before the request began must be
// seen), so one that comes while a read is under way does not take that
// read's answer: it joins the next read, which begins as soon as the one
// under way ends and answers every request that joined it. Under 64
// concurrent writers that is one read for every several requests instead
// of one each, one after another on the one connection.
type versionReader struct {
	db *sql.DB
	mu sync.Mutex
	// cur is the read under way (nil: none); next is the read that begins
	// when cur ends, which a request that comes meanwhile joins. Its
	// leader, the request that made it, runs it.
	cur, next *versionRead
	stmtMu    sync.Mutex // the statement: the read under way and close
	stmt      *sql.Stmt
	// queries counts the reads made (tests).
	queries atomic.Int64
}

// versionRead is one read of the version and the requests it answers.
type versionRead struct {
	done    chan struct{} // closed with n and err set
	n       int64
	err     error
	readers int // the requests it answers (under the reader's mu)
}

func openVersionReader(path string) (*versionReader, error) {
	q := url.Values{}
	for _, p := range []string{"busy_timeout(" + strconv.FormatInt(busyTimeout.Milliseconds(), 10) + ")", "query_only(1)", "mmap_size(0)", "cache_size(-256)"} {
		q.Add("_pragma", p)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	return &versionReader{db: db}, nil
}

// read returns the principals version as a read that began after the call
// did finds it.
func (v *versionReader) read(ctx context.Context) (int64, error) {
	v.mu.Lock()
	if v.cur == nil {
		r := &versionRead{done: make(chan struct{}), readers: 1}
		v.cur = r
		v.mu.Unlock()
		v.run(ctx, r)
		return r.n, r.err
	}
	r, lead := v.next, false
	if r == nil {
		r, lead = &versionRead{done: make(chan struct{})}, true
		v.next = r
	}
	r.readers++
	prev := v.cur
	v.mu.Unlock()
	if lead {
		// The reads the next one answers are waiting on it: it runs
		// whatever this request's context does (a read takes a page).
		<-prev.done // which made r the read under way
		v.run(context.WithoutCancel(ctx), r)
		return r.n, r.err
	}
	select {
	case <-r.done:
		return r.n, r.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// run makes the read r, the read under way, and then the next one, if any
// request joined it, the read under way.
func (v *versionReader) run(ctx context.Context, r *versionRead) {
	r.n, r.err = v.query(ctx)
	v.mu.Lock()
	v.cur, v.next = v.next, nil
	v.mu.Unlock()
	close(r.done)
}

// query reads the version; one read at a time (the read under way) calls it.
func (v *versionReader) query(ctx context.Context) (int64, error) {
	v.queries.Add(1)
	v.stmtMu.Lock()
	defer v.stmtMu.Unlock()
	if v.stmt == nil {
		st, err := v.db.PrepareContext(ctx, `SELECT n FROM principals_version WHERE id = 0`)
		if err != nil {
			return 0, err
		}
		v.stmt = st
	}
	var n int64
	err := v.stmt.QueryRowContext(ctx).Scan(&n)
	return n, err
}

func (v *versionReader) close() error {
	v.stmtMu.Lock()
	defer v.stmtMu.Unlock()
	var err error
	if v.stmt != nil {
		err = v.stmt.Close()
	}
	return errors.Join(err, v.db.Close())
}

// PrincipalsVersion reads the principals version (custody.PrincipalVersioner).
func (s *Store) PrincipalsVersion(ctx context.Context) (int64, error) {
	n, err := s.pv.read(ctx)
	if err != nil {
		return 0, unavailable(err)
	}
	return n, nil
}
