package postgres

import (
	"context"
	"hash/maphash"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/internal/lexical"
	"github.com/custody-mem/custody/internal/postings"
	"github.com/custody-mem/custody/tlog"
	"github.com/jackc/pgx/v5"
)

// Searches ranked in memory.
//
// ts_rank_cd scores every record that holds a word of the query, and
// PostgreSQL reads each one's row to do it: a common two-word query at a
// million records reads tens of thousands of rows (170 ms). So each server
// keeps, per tenant, a copy of the search terms in memory (package
// internal/postings, BM25 as the SQLite store ranks), ranks a query there,
// and asks PostgreSQL only whether the best few are eligible
// (searchFilter, the same condition the ranked query applies), a few at a
// time, as the SQLite store does (search_memory.go there).
//
// The copy follows the tenant's log, which other servers write too. Every
// change of a record is a log entry naming it, so a copy that holds the
// log up to size n is brought up to the log's size m by reading the
// entries [n, m), and the records they name, in one snapshot: a new record
// is added; one whose body or key has changed (an erasure) is taken out
// without the text it was added with, which is gone, by reading every
// term's postings (about 1 ms at 100k records), and added again if it
// still has text; one whose audience has changed is moved to its
// partition. A search reads the log's size first (one primary-key
// probe), so it never ranks with a copy behind a commit it could see.
//
// Nothing here decides who sees a record: eligibility is read from
// PostgreSQL for each record returned. A copy that missed a change could
// rank a record too low, never show one to a caller who may not see it.
// While a tenant's copy is built (on its own goroutine past
// inlineBuildRecords records), stale (far behind the log, or a log entry
// it cannot read), or past the memory bound, its searches rank by
// ts_rank_cd, as before.

// DefaultSearchMemory bounds the memory of the copies, over all tenants,
// unless SetSearchMemory says otherwise: past it, they are dropped and
// every search ranks by ts_rank_cd.
const DefaultSearchMemory = 1 << 30

var (
	// inlineBuildRecords is the largest tenant whose copy its first search
	// builds itself, waiting for it, rather than on a goroutine of its own.
	inlineBuildRecords = 20000
	// catchUpEntries is the most log entries a search reads to bring a
	// copy up to date; further behind (a restore), the copy is built again.
	catchUpEntries uint64 = 10000
	// rebuildEvery is how often at most a tenant's copy is built again
	// once it was built.
	rebuildEvery = 30 * time.Second
)

// searchCopies are the store's copies, by tenant.
type searchCopies struct {
	mu      sync.Mutex
	tenants map[string]*tenantCopy
	limit   int64 // bytes over all tenants; ≤ 0: no copies
	over    bool  // the bound was passed: no copies from then on
	closed  bool
	builds  sync.WaitGroup
	bg      context.Context
	stop    context.CancelFunc
	seed    maphash.Seed
	scratch sync.Pool // *postings.Scratch

	byCopy, bySQL atomic.Int64
	asked         atomic.Int64 // records whose eligibility the copies' rankings asked about
	forms         atomic.Int64 // the bytes of the tenants' kept forms
	formsServed   atomic.Int64 // candidates given by their kept forms
}

// tenantCopy is one tenant's copy and what it holds.
type tenantCopy struct {
	// catch serialises bringing the copy up to date and building it.
	catch sync.Mutex

	mu   sync.RWMutex
	x    *postings.Index // nil until built, and while stale
	ids  []string        // record id by row of x
	rows map[string]uint32
	sums []uint64 // by row: the hash of the body and key x holds
	size uint64   // the log size x holds

	building  bool
	lastBuild time.Time

	forms copyForms // kept by row (search_copy_forms.go)
}

func newSearchCopies(limit int64) *searchCopies {
	bg, stop := context.WithCancel(context.Background())
	return &searchCopies{tenants: map[string]*tenantCopy{}, limit: limit, bg: bg, stop: stop, seed: maphash.MakeSeed()}
}

// SetSearchMemory bounds the memory the copies of the search terms may
// hold, in bytes, over all tenants; 0 or less keeps none (every search
// ranks by ts_rank_cd). Call it before the first search.
func (s *Store) SetSearchMemory(bytes int64) {
	s.copies.mu.Lock()
	defer s.copies.mu.Unlock()
	s.copies.limit = bytes
}

// SearchCopyStats reports the records and estimated bytes the copies
// hold (with the forms kept beside them), and how many rankings the
// copies and ts_rank_cd have made.
func (s *Store) SearchCopyStats() (records, bytes, byCopy, bySQL int64) {
	c := s.copies
	c.mu.Lock()
	tenants := make([]*tenantCopy, 0, len(c.tenants))
	for _, tc := range c.tenants {
		tenants = append(tenants, tc)
	}
	c.mu.Unlock()
	for _, tc := range tenants {
		tc.mu.RLock()
		if tc.x != nil {
			records += tc.x.Rows()
			bytes += tc.bytesLocked()
		}
		tc.mu.RUnlock()
	}
	return records, bytes + c.forms.Load(), c.byCopy.Load(), c.bySQL.Load()
}

// close stops the builds and waits for them.
func (c *searchCopies) close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.stop()
	c.builds.Wait()
}

// copyPart is the partition of a tenant's copy a record is in: its
// owner's for a record only its owner may read, its group's for one a
// group's members may, the shared one for the tenant's; and deadPart for
// a record no one may retrieve (live false: not admitted, or an older
// version of its key). A search ranks its caller's partitions, with
// their statistics alone: no record the caller may not retrieve changes
// its scores (rule 4).
func copyPart(owner, audience string, live bool) string {
	switch {
	case !live:
		return deadPart
	case audience == custody.AudienceOwner:
		return "o\x00" + owner
	case audience == custody.AudienceTenant:
		return "s"
	}
	return "g\x00" + audience
}

// deadPart is the partition of the records no one may retrieve: no
// search keeps it, not even their owner's (postings.Place). A search by
// a record's owner keeps its live records in any partition (Owner).
const deadPart = ""

// copyParts are the partitions of a tenant's copy whose records may be
// eligible for sc: its own, the shared one and its groups'.
func copyParts(sc custody.Scope) []string {
	parts := []string{copyPart(sc.Subject, custody.AudienceOwner, true), copyPart("", custody.AudienceTenant, true)}
	for _, g := range sc.Groups {
		parts = append(parts, copyPart("", "group:"+g, true))
	}
	return parts
}

func (tc *tenantCopy) bytesLocked() int64 {
	return tc.x.Bytes() + int64(len(tc.ids))*(16+8+40) + int64(cap(tc.forms.at))*8 // ids, sums, the map's entry; where the forms are
}

// ranked is what a copy ranked: the hits, and the record id of each row.
type ranked struct {
	hits []postings.Hit
	ids  []string
	tc   *tenantCopy
}

// rank ranks q's terms over the rows postings.QueryFilter keeps, with
// sc.Tenant's copy brought up to the log's size first; ok is false if the
// copy cannot rank them (the caller ranks by ts_rank_cd).
func (s *Store) rank(ctx context.Context, sc custody.Scope, q custody.SearchQuery, terms []string, scratch *postings.Scratch) (ranked, bool, error) {
	var rk ranked
	ok, err := s.withCopy(ctx, sc.Tenant, func(tc *tenantCopy) {
		if terms == nil {
			terms = lexical.Query(q.Text, maxQueryTerms)
		}
		rk = ranked{hits: tc.x.Rank(terms, postings.QueryFilter(copyParts(sc), sc.Subject, sc.Now, q), scratch), ids: tc.ids, tc: tc}
	})
	switch {
	case err != nil:
		return ranked{}, false, err
	case ok:
		s.copies.byCopy.Add(1)
	default:
		s.copies.bySQL.Add(1)
	}
	return rk, ok, nil
}

// withCopy calls fn with tenant's copy, brought up to the tenant's log
// first, under its read lock; false, and fn is not called, if there is no
// copy that holds the log (the caller asks PostgreSQL).
func (s *Store) withCopy(ctx context.Context, tenant string, fn func(tc *tenantCopy)) (bool, error) {
	tc := s.copies.tenant(tenant)
	if tc == nil {
		return false, nil
	}
	size, err := logSize(ctx, s.pool, tenant)
	if err != nil {
		return false, err
	}
	if !tc.holds(size) {
		if err := s.bringUp(ctx, tc, tenant, size); err != nil {
			return false, err
		}
	}
	tc.mu.RLock()
	defer tc.mu.RUnlock()
	if tc.x == nil || tc.size < size || tc.building {
		return false, nil
	}
	fn(tc)
	return true, nil
}

// tenant is tenant's copy, made empty if it has none; nil if there are no
// copies.
func (c *searchCopies) tenant(tenant string) *tenantCopy {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.limit <= 0 || c.over || c.closed {
		return nil
	}
	tc := c.tenants[tenant]
	if tc == nil {
		tc = &tenantCopy{forms: copyForms{total: &c.forms}}
		c.tenants[tenant] = tc
	}
	return tc
}

// holds reports whether the copy holds the log up to size.
func (tc *tenantCopy) holds(size uint64) bool {
	tc.mu.RLock()
	defer tc.mu.RUnlock()
	return tc.x != nil && tc.size >= size && !tc.building
}

// bringUp brings tenant's copy up to the log's size (at least size): by
// the entries since the size it holds when it holds one close enough,
// else by building it, at most every rebuildEvery: inline for a small
// tenant, on a goroutine of its own otherwise.
func (s *Store) bringUp(ctx context.Context, tc *tenantCopy, tenant string, size uint64) error {
	tc.mu.RLock()
	building := tc.building
	tc.mu.RUnlock()
	if building {
		return nil
	}
	tc.catch.Lock()
	defer tc.catch.Unlock()
	tc.mu.RLock()
	x, held, building, last := tc.x, tc.size, tc.building, tc.lastBuild
	tc.mu.RUnlock()
	switch {
	case building:
		return nil
	case x != nil && held >= size:
		return nil
	case x != nil && size-held <= catchUpEntries:
		return s.catchUp(ctx, tc, tenant, held)
	case !last.IsZero() && time.Since(last) < rebuildEvery:
		return nil
	}
	small, err := s.smallTenant(ctx, tenant)
	if err != nil {
		return err
	}
	if small {
		return s.buildCopy(ctx, tc, tenant)
	}
	s.startBuild(tc, tenant)
	return nil
}

// catchUp applies to tc the log entries of tenant from held to the log's
// size, and the records they name as they are now, read in one snapshot.
func (s *Store) catchUp(ctx context.Context, tc *tenantCopy, tenant string, held uint64) error {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return unavailable(err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	size, err := logSize(ctx, tx, tenant)
	if err != nil || size <= held {
		return err
	}
	leaves, err := readLeaves(ctx, tx, tenant, held, size)
	if err != nil {
		return err
	}
	var ids []string
	seen := map[string]bool{}
	for _, l := range leaves {
		e, err := tlog.ParseLeaf(l.Data)
		if err != nil {
			tc.mu.Lock()
			tc.dropLocked() // built again; verify reports the entry
			tc.mu.Unlock()
			return nil
		}
		for _, id := range append([]string{e.RecordID}, e.RecordIDs...) {
			if id != "" && !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	var recs []copyRecord
	if len(ids) > 0 {
		add := func(r copyRecord) { recs = append(recs, r) }
		// With the other versions of their keys: a new version, or one
		// that leaves or enters the admitted state, changes which of
		// them is in force, and only its own entry names it.
		if err := eachCopyRecord(ctx, tx, add, `SELECT `+copyCols+` FROM records r WHERE r.tenant = $1 AND (r.id = ANY($2)
 OR r.key <> '' AND (r.owner, r.namespace, r.key) IN (SELECT owner, namespace, key FROM records WHERE tenant = $1 AND id = ANY($2) AND key <> ''))`, tenant, ids); err != nil {
			return err
		}
	}
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if tc.x == nil || tc.size != held {
		return nil
	}
	var changed []copyRecord
	for _, r := range recs {
		if tc.applyLocked(s.copies.seed, r) {
			changed = append(changed, r)
		}
	}
	tc.replaceLocked(s.copies.seed, changed)
	tc.size = size
	return s.copies.checkBound(tc)
}

func (tc *tenantCopy) dropLocked() {
	tc.x, tc.ids, tc.rows, tc.sums = nil, nil, nil, nil
	tc.dropFormsLocked()
}

// copyRecord is what a copy holds of a record.
type copyRecord struct {
	id, body, key, owner, audience, namespace, class string
	created                                          int64 // Unix nanoseconds, as stored
	expires                                          int64 // Unix nanoseconds, 0 for never
	erased                                           bool
	meta                                             string // the metadata's JSON, "" for none
	// live is whether anyone may retrieve it, audience and expiry
	// aside: admitted, and keyless or the newest admitted version of its
	// key.
	live bool
}

// place is where the copy holds r (postings.Place).
func (r copyRecord) place() postings.Place {
	return postings.Place{Part: copyPart(r.owner, r.audience, r.live), Owner: r.owner, Namespace: r.namespace, Class: r.class, Created: r.created,
		Expires: r.expires, Key: r.key, Meta: r.meta}
}

// textSum is the hash of r's body and key the copy keeps by row, 0 for an
// erased record.
func textSum(seed maphash.Seed, r copyRecord) uint64 {
	if r.erased {
		return 0
	}
	return textSumOf(seed, r.body, r.key)
}

// applyLocked gives r, as it is now, to the copy: a new record is added,
// one the copy holds is put in its audience's partition (it may have
// changed). It reports whether the copy holds other text for r (an
// erasure), which replaceLocked takes out.
func (tc *tenantCopy) applyLocked(seed maphash.Seed, r copyRecord) (changed bool) {
	sum := textSum(seed, r)
	row, known := tc.rows[r.id]
	switch {
	case !known && r.erased:
	case !known:
		row = uint32(len(tc.ids))
		tc.x.Add(row, r.place(), lexical.Document(r.body), lexical.Document(r.key))
		tc.ids, tc.sums = append(tc.ids, r.id), append(tc.sums, sum)
		tc.rows[r.id] = row
	case tc.sums[row] != sum:
		return true
	default:
		tc.x.Move(row, copyPart(r.owner, r.audience, r.live))
	}
	return false
}

// replaceLocked takes the terms of recs, which the copy holds with other
// text, out of it, without that text (it is gone: reading every term's
// postings, postings.RemoveRows), and adds again those that still have
// text. An erased record's terms are then nowhere in the copy.
func (tc *tenantCopy) replaceLocked(seed maphash.Seed, recs []copyRecord) {
	if len(recs) == 0 {
		return
	}
	rows := make([]uint32, len(recs))
	for i, r := range recs {
		rows[i] = tc.rows[r.id]
	}
	tc.x.RemoveRows(rows)
	for i, r := range recs {
		row := rows[i]
		tc.sums[row] = textSum(seed, r)
		tc.forgetFormLocked(row)
		if !r.erased {
			tc.x.Add(row, r.place(), lexical.Document(r.body), lexical.Document(r.key))
		}
	}
}

// checkBound drops every copy, for good, once they hold more than the
// bound; tc's lock is held.
func (c *searchCopies) checkBound(tc *tenantCopy) error {
	total := tc.bytesLocked()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, other := range c.tenants {
		if other != tc && other.mu.TryRLock() {
			if other.x != nil {
				total += other.bytesLocked()
			}
			other.mu.RUnlock()
		}
	}
	if total <= c.limit || c.over {
		return nil
	}
	slog.Warn("search: the copies of the search terms in memory passed their bound; ranking by ts_rank_cd from now on (raise --search-memory to keep them)",
		"bound_bytes", c.limit, "bytes", total)
	c.over = true
	tc.dropLocked()
	for _, other := range c.tenants {
		if other != tc {
			go func() {
				other.mu.Lock()
				other.dropLocked()
				other.mu.Unlock()
			}()
		}
	}
	return nil
}
