package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"strconv"
	"sync"
)

// versionReader reads the principals version (schema.sql) on a connection
// of its own, outside any transaction, so that it sees the latest commit of
// any connection or process. Every authenticated request reads it, so the
// connection maps no memory: a connection that maps the file remaps it
// at its first read after the file grew, which a server writing all the
// time makes every read of a pooled connection pay (about as much as the
// token lookup the version read replaces). Here a read after a write costs
// a look at the WAL index and the read of one page.
type versionReader struct {
	db   *sql.DB
	mu   sync.Mutex
	stmt *sql.Stmt
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

func (v *versionReader) read(ctx context.Context) (int64, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
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
	v.mu.Lock()
	defer v.mu.Unlock()
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
