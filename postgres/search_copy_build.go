package postgres

import (
	"context"
	"log/slog"
	"time"

	"github.com/custody-mem/custody/internal/postings"
	"github.com/jackc/pgx/v5"
)

// Building a tenant's copy of the search terms (search_copy.go): from its
// records, in one snapshot with its log's size.

// smallTenant reports whether tenant has at most inlineBuildRecords records.
func (s *Store) smallTenant(ctx context.Context, tenant string) (bool, error) {
	var n int
	err := s.pool.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM records WHERE tenant = $1 LIMIT $2) r`, tenant, inlineBuildRecords+1).Scan(&n)
	return n <= inlineBuildRecords, classify(err)
}

// beforeAsideBuild, if set (by tests), runs on a build's own goroutine
// before it reads anything.
var beforeAsideBuild func()

// startBuild builds tc on a goroutine of its own, unless the store is
// closing.
func (s *Store) startBuild(tc *tenantCopy, tenant string) {
	c := s.copies
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.builds.Add(1) // under c.mu: close sets closed under it before it waits
	c.mu.Unlock()
	tc.mu.Lock()
	tc.building = true
	tc.mu.Unlock()
	go func() {
		defer c.builds.Done()
		if beforeAsideBuild != nil {
			beforeAsideBuild()
		}
		start := time.Now()
		if err := s.buildCopy(c.bg, tc, tenant); err != nil {
			if c.bg.Err() == nil {
				slog.Warn("search: could not build a tenant's copy in memory; ranking by ts_rank_cd until a search tries again", "tenant", tenant, "err", err)
			}
			return
		}
		tc.mu.RLock()
		defer tc.mu.RUnlock()
		if tc.x != nil {
			slog.Info("search: a tenant's search terms are in memory; its searches are ranked there from now on",
				"tenant", tenant, "records", tc.x.Rows(), "mib", tc.bytesLocked()>>20, "took", time.Since(start).Round(time.Millisecond))
		}
	}()
}

// buildCopy builds tc from tenant's records, in one snapshot with the
// log's size.
func (s *Store) buildCopy(ctx context.Context, tc *tenantCopy, tenant string) error {
	defer func() {
		tc.mu.Lock()
		tc.building, tc.lastBuild = false, time.Now()
		tc.mu.Unlock()
	}()
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return unavailable(err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	size, err := logSize(ctx, tx, tenant)
	if err != nil {
		return err
	}
	b := &tenantCopy{x: postings.New(), rows: map[string]uint32{}}
	add := func(r copyRecord) { b.applyLocked(s.copies.seed, r) }
	if err := eachCopyRecord(ctx, tx, add, `SELECT `+copyCols+` FROM records r WHERE r.tenant = $1 AND NOT r.erased`, tenant); err != nil {
		return err
	}
	tc.mu.Lock()
	defer tc.mu.Unlock()
	tc.dropFormsLocked() // kept by the rows of the copy replaced
	tc.x, tc.ids, tc.rows, tc.sums, tc.size = b.x, b.ids, b.rows, b.sums, size
	return s.copies.checkBound(tc)
}

// PrepareSearch builds, on goroutines of their own, the copy of every
// tenant (every tenant has principals), as a server does as it starts,
// so that the first searches are ranked in memory.
func (s *Store) PrepareSearch() {
	c := s.copies
	c.mu.Lock()
	if c.closed || c.limit <= 0 || c.over {
		c.mu.Unlock()
		return
	}
	c.builds.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.builds.Done()
		tenants, err := principalTenants(c.bg, s.pool)
		if err != nil {
			if c.bg.Err() == nil {
				slog.Warn("search: could not list the tenants to copy their search terms; each tenant's first search does it", "err", err)
			}
			return
		}
		for _, tenant := range tenants {
			if tc := c.tenant(tenant); tc != nil {
				if err := s.bringUp(c.bg, tc, tenant, 0); err != nil && c.bg.Err() == nil {
					slog.Warn("search: could not copy a tenant's search terms; its first search tries again", "tenant", tenant, "err", err)
				}
			}
		}
	}()
}

// AwaitSearchIndex waits for the copies being built (for benchmarks and
// tests, which measure the store as a server's is once it has started).
func (s *Store) AwaitSearchIndex() { s.copies.builds.Wait() }

// principalTenants lists the tenants that have principals.
func principalTenants(ctx context.Context, q querier) ([]string, error) {
	rows, err := q.Query(ctx, `SELECT DISTINCT tenant FROM principals ORDER BY tenant`)
	if err != nil {
		return nil, classify(err)
	}
	ts, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return ts, classify(err)
}

// copyCols are the columns of a copyRecord, for eachCopyRecord, of a
// record aliased r; live is eligible's condition less the audience and
// the expiry (records.go).
const copyCols = `r.id, r.body, r.key, r.owner, r.audience, r.namespace, r.class, r.created_at, COALESCE(r.expires_at, 0), r.erased, r.metadata,
 r.state = 'admitted' AND (r.key = '' OR NOT EXISTS (SELECT 1 FROM records n WHERE n.tenant = r.tenant AND n.owner = r.owner
   AND n.namespace = r.namespace AND n.key = r.key AND n.version > r.version AND n.state = 'admitted'))`

// eachCopyRecord calls fn with each record query reads (copyCols).
func eachCopyRecord(ctx context.Context, q querier, fn func(copyRecord), query string, args ...any) error {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return classify(err)
	}
	defer rows.Close()
	for rows.Next() {
		var r copyRecord
		if err := rows.Scan(&r.id, &r.body, &r.key, &r.owner, &r.audience, &r.namespace, &r.class, &r.created, &r.expires, &r.erased, &r.meta, &r.live); err != nil {
			return classify(err)
		}
		fn(r)
	}
	return classify(rows.Err())
}
