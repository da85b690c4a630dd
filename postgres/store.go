// Package postgres is custody's scale-out store: PostgreSQL, shared by any
// number of stateless custody servers.
//
// It keeps the same rows as the embedded SQLite store (records, edges,
// principals, sessions, grants, tombstones, policies, and the Merkle log's
// leaves, tree nodes and checkpoints), so that a state change and its log
// entry commit in one transaction. Search ranks by BM25 with each
// tenant's search terms, which every server keeps in memory
// (search_copy.go), and by ts_rank_cd over a tsvector column with a GIN
// index while it cannot; the gate's substring lookups use a normalised
// text column with a pg_trgm index. Every retrieval filters eligibility
// (tenant, audience, state, expiry, newest admitted version of a key) inside
// its SQL, before any LIMIT.
//
// Writers of one tenant serialise on that tenant's transaction-scoped
// advisory lock, taken before the transaction's first statement on the
// tenant (tenantlock.go), so each tenant's log indices stay contiguous and
// version numbers unique however many servers write at once, exactly as
// with SQLite's single writer; writers of different tenants run side by
// side. Within one process, at most half the pool's connections write at
// once, so waiting writers do not starve reads of pooled connections. Reads do not take the
// lock; View runs in one REPEATABLE READ snapshot.
//
// Open applies the embedded migrations (migrations/NNN_name.sql) under a
// session advisory lock and records them in schema_migrations, so servers
// started together migrate once. Connection failures surface as errors
// wrapping custody.ErrUnavailable (HTTP 503); nothing is retried silently.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/internal/factsmemo"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Advisory lock keys ("custody" followed by a number). writeLock is the
// store lock, shared by the writers of single tenants and exclusive for
// writers of all (tenantlock.go); migrateLock serialises schema
// migrations.
const (
	writeLock   int64 = 0x637573746f647901
	migrateLock int64 = 0x637573746f647902
)

// Store is the PostgreSQL backend.
type Store struct {
	pool *pgxpool.Pool
	// writer admits at most half the pool's connections to Update at a
	// time, so that writers queue here rather than each holding a pooled
	// connection while they wait for a tenant's lock (which would starve
	// reads).
	writer chan struct{}
	// queue holds the writes waiting for a batch (writer.go).
	queue chan *write
	// emptyLeads counts the writer slots taken that found no write queued
	// (the tests: a caller whose write a batch has taken waits instead).
	emptyLeads atomic.Int64
	// borders are the tenants' log borders the writer last committed.
	borders borders
	// copies are the tenants' search terms in memory (search_copy.go).
	copies *searchCopies
	// facts are ids of records read and found to be no episode: the
	// neighbour walk leaves them out (neighbours.go).
	facts factsmemo.Memo
	// keys are the versions of keys the writer last wrote or read.
	keys keyCache
	// noAhead runs every batch with its reads (the tests of that path).
	noAhead bool
	// The batches run ahead in one round trip (ahead.go).
	aheadApplied, aheadBatches, aheadDeclined, aheadMissed, aheadFailed atomic.Int64
}

var _ custody.Store = (*Store)(nil)

// Open connects to the database named by dsn (a libpq connection string or
// URL, e.g. postgres://user:pass@host:5432/custody?sslmode=disable), applies
// any pending migrations and returns the store. A server that cannot be
// reached is an error wrapping custody.ErrUnavailable.
func Open(ctx context.Context, dsn string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, &custody.Error{Kind: custody.ErrInvalid, Field: "postgres",
			Msg: fmt.Sprintf("postgres connection string: %v (use postgres://user:password@host:5432/dbname?sslmode=disable or key=value pairs)", err)}
	}
	return OpenConfig(ctx, cfg)
}

// DefaultConnectTimeout bounds each connection attempt when the DSN sets
// no connect_timeout, so that an unreachable server is reported as
// unavailable rather than waited for.
const DefaultConnectTimeout = 10 * time.Second

// OpenConfig is Open with a parsed pool configuration.
func OpenConfig(ctx context.Context, cfg *pgxpool.Config) (*Store, error) {
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = DefaultConnectTimeout
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("opening postgres store: %w", classify(err))
	}
	s := &Store{pool: pool, writer: make(chan struct{}, max(1, cfg.MaxConns/2)), queue: make(chan *write, 4*maxBatch), copies: newSearchCopies(DefaultSearchMemory)}
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

// Close stops the builds of the search copies and closes the connection
// pool.
func (s *Store) Close() error {
	s.copies.close()
	s.pool.Close()
	return nil
}

// Analyze refreshes the planner's statistics of the record tables, as
// autovacuum does in time; run it after a bulk load (a restore) so that
// searches use the text index at once.
func (s *Store) Analyze(ctx context.Context) error {
	_, err := s.pool.Exec(ctx, `ANALYZE records, edges`)
	return classify(err)
}

// Pool exposes the connection pool for offline tools and tests that need
// raw access (tamper tests, benchmarks).
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// View runs fn in a read-only transaction that sees one snapshot.
func (s *Store) View(ctx context.Context, fn func(custody.Tx) error) error {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return unavailable(err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if err := fn(&txn{tx: tx, ro: true}); err != nil {
		if tx.Conn().IsClosed() || connError(err) {
			return unavailable(err)
		}
		return err
	}
	return nil
}

// unavailable wraps err as custody.ErrUnavailable, unless it is already
// that or a cancellation by the caller.
func unavailable(err error) error {
	if err == nil || errors.Is(err, custody.ErrUnavailable) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("%w: %w", custody.ErrUnavailable, err)
}

// classify wraps connection failures as custody.ErrUnavailable, text that
// PostgreSQL cannot store as custody.ErrInvalid, and leaves every other error
// as it is.
func classify(err error) error {
	if connError(err) {
		return unavailable(err)
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "22021" { // character_not_in_repertoire
		return &custody.Error{Kind: custody.ErrInvalid, Msg: fmt.Sprintf(
			"text holds a character PostgreSQL cannot store (a NUL byte?): %s; remove it and try again", pgErr.Message)}
	}
	return err
}

// connError reports whether err says the server could not be reached or
// dropped the connection (as opposed to rejecting a statement).
func connError(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, custody.ErrUnavailable) {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case len(pgErr.Code) == 5 && pgErr.Code[:2] == "08": // connection exception
			return true
		case pgErr.Code == "57P01", pgErr.Code == "57P02", pgErr.Code == "57P03": // shutdown, crash, starting up
			return true
		case pgErr.Code == "53300": // too many connections
			return true
		}
		return false
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	switch {
	case errors.As(err, &connectErr), errors.As(err, &netErr):
		return true
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed):
		return true
	case pgconn.SafeToRetry(err):
		return true
	}
	return false
}
