package sqlite

import (
	"context"
	"log/slog"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/internal/postings"
)

// FTS5's bm25() scores every record that holds a term of the query,
// reading each one's length from its docsize table as it goes: a search
// of two common words at 100k records read 2,400 rows that way, and one
// at 1M more, however few it returned. So the store keeps a copy of the
// search index in memory (internal/postings), which ranks the same
// records with the same scores from the postings of the query's terms
// alone; the eligibility of the best is then checked in SQL, a few at a
// time (search_memory.go).
//
// The copy is kept in step with the records by the writer: each
// transaction that changes what the copy holds (inserting records, which
// the copy takes while they wait in index_pending, erasing one, moving
// one between partitions, rebuilding the index) collects what it changed
// (txn.ops), and once committed gives the changes to the copy, which then
// holds the transaction's position (searchPos): the last rid of records,
// and, when it changed records indexed before it, one more generation
// counted in search_generation. A search reads the position: one ahead of
// the copy's that no commit of this store's writer is giving it, which
// only another connection (another process on the same file) can make,
// sends it to FTS5, and the copy is built again.
//
// The copy is built, from the records themselves (the same terms
// custody_terms gives records_fts), on a goroutine of its own the first
// time a search needs it; searches rank with FTS5 until it is ready.

// DefaultSearchMemory bounds the memory the copy may hold: past it the
// store drops the copy and ranks with FTS5 alone (see Options).
const DefaultSearchMemory = 1 << 30

// indexOp is one change a transaction made for the copy: rid added with
// these terms, or removed (its terms, to find its postings).
type indexOp struct {
	rid       int64
	body, key []string
	// at is where it is (its partition, searchPart, and for an addition
	// its namespace, class, creation time, key and metadata; for a removal
	// the metadata it was added with).
	at     postings.Place
	remove bool
	move   bool // its audience changed: only its partition
	// reset is the whole index deleted (Reindex): the copy is built again.
	reset bool
}

// searchPart is the partition of the copy a record is in
// (internal/postings): its owner's, if only its owner may read it, its
// group's, if a group's members may, or its tenant's shared one; and, if
// no one may retrieve it (live is false: not admitted, or an older
// version of its key), deadPart. A search ranks the caller's partitions
// and the caller's own records (searchOwner), and its statistics are
// theirs alone: no other record can be eligible for it (rule 4), so none
// changes its scores, and the caller pays for the matches it may see,
// not for every user's.
func searchPart(tenant, owner, audience string, live bool) string {
	switch {
	case !live:
		return deadPart
	case audience == custody.AudienceOwner:
		return "o\x00" + tenant + "\x00" + owner
	case audience == custody.AudienceTenant:
		return "s\x00" + tenant
	}
	return "g\x00" + tenant + "\x00" + audience
}

// deadPart is the partition of the records no one may retrieve: no
// search keeps it, not even their owner's (postings.Place).
const deadPart = ""

// searchOwner is the owner of a record as the copy knows it
// (postings.Place.Owner): a search by the owner keeps its live records in
// any partition (a record shared with a group its owner is not in).
func searchOwner(tenant, owner string) string { return tenant + "\x00" + owner }

// searchLive reports whether a record in state, head and key may be
// retrieved by anyone (rule 4 less the audience and the expiry, which
// the copy keeps apart): admitted, and keyless or its key's newest
// admitted version.
func searchLive(state string, head bool, key string) bool {
	return state == string(custody.StateAdmitted) && (key == "" || head)
}

// searchParts are the partitions whose records may be eligible for sc:
// its own, its tenant's shared one and its groups'.
func searchParts(sc custody.Scope) []string {
	parts := []string{searchPart(sc.Tenant, sc.Subject, custody.AudienceOwner, true), searchPart(sc.Tenant, "", custody.AudienceTenant, true)}
	for _, g := range sc.Groups {
		parts = append(parts, searchPart(sc.Tenant, "", "group:"+g, true))
	}
	return parts
}

// searchIndex is the store's copy of the search index and its state.
type searchIndex struct {
	mu sync.RWMutex
	x  *postings.Index // nil until built, and when dropped
	// at is the position x holds.
	at searchPos
	// applying is set while the writer commits changes it has yet to give
	// to x: a search that finds a newer position then is not seeing
	// another connection's commit.
	applying bool
	// applied is closed when the changes being committed are given to x
	// (or the commit fails): a search that read their position waits
	// on it, at most catchUpWait, rather than rank with FTS5.
	applied chan struct{}
	waiting atomic.Int32 // searches waiting on applied
	// building is set while a build runs; replay then keeps the changes
	// committed meanwhile, by position, for the build to apply after its
	// snapshot.
	building bool
	replay   []committed
	// limit is the memory bound (0: no copy at all); over is set once the
	// copy outgrew it.
	limit int64
	over  bool
	// closed is set by Close: no build starts after it.
	closed bool
	pool   sync.Pool // *rankScratch
	// lastBuild is when the last build began (zero: none yet).
	lastBuild time.Time
	// byCopy and byFTS count the rankings made each way.
	byCopy, byFTS atomic.Int64
	builds        sync.WaitGroup // the builds running
	// texts keeps the ids and texts of the records rankings read
	// (search_texts.go); textsKept counts the records they answered for,
	// textsRead those the same rankings read from their rows.
	texts                searchTexts
	textsKept, textsRead atomic.Int64
}

// afterSearchSnapshot, if set (by tests), runs once a build has taken its
// snapshot, before it reads the records.
var afterSearchSnapshot func()

// committed is one transaction's changes: its generation, if it changed
// records already indexed, and the rids of the records it inserted
// (first to last, 0 for none); reset means it rebuilt the whole index
// first.
type committed struct {
	gen         int64
	first, last int64
	reset       bool
	ops         []indexOp
}

// changes reports whether the copy has anything to take from c.
func (c committed) changes() bool { return c.gen != 0 || c.last != 0 }

// follows reports whether c comes right after at, nothing between: its
// generation the next (if it has one) and its first record the next rid
// (if it inserted any). Another connection's commit in between (another
// process's write) leaves a gap, and the copy is built again.
func (c committed) follows(at searchPos) bool {
	return !c.reset && (c.gen == 0 || c.gen == at.gen+1) && (c.first == 0 || c.first == at.rid+1)
}

// within reports whether a build's snapshot at at holds c already.
func (c committed) within(at searchPos) bool {
	if c.gen != 0 {
		return c.gen <= at.gen
	}
	return c.last <= at.rid
}

// willApply marks that the writer is about to commit changes.
func (si *searchIndex) willApply() {
	si.mu.Lock()
	si.applying = true
	if si.applied == nil {
		si.applied = make(chan struct{})
	}
	si.mu.Unlock()
}

// apply gives the copy a committed transaction's changes (ok), or only
// clears applying for one that did not commit.
func (si *searchIndex) apply(c committed, ok bool) {
	si.mu.Lock()
	defer si.mu.Unlock()
	si.applying = false
	if si.applied != nil {
		close(si.applied)
		si.applied = nil
	}
	if !ok {
		return
	}
	// Erased bodies leave the texts whatever state the copy is in: a
	// search that ranked before the copy was dropped (or began to be
	// built) may have kept texts after the drop emptied them.
	si.texts.forget(c.ops)
	if si.building {
		si.replay = append(si.replay, c)
		return
	}
	switch {
	case si.x == nil:
	case !c.follows(si.at):
		// The index was rebuilt, or another connection changed it since
		// the copy's generation: the next search builds the copy again.
		si.x = nil
		si.texts.empty()
	default:
		si.applyLocked(c)
	}
}

// countIndexChanges returns the transaction's changes for the copy, and
// counts one more generation in search_generation if they change records
// indexed before it (a removal, a move, a reset). Records it only
// inserted are told by their rids (searchPos): a write commits no
// generation, a page less.
func (t *txn) countIndexChanges(ctx context.Context) (committed, error) {
	if err := t.searchMoves(ctx); err != nil {
		return committed{}, err
	}
	c := committed{ops: t.ops, reset: t.reset, first: t.firstRid, last: t.lastRid}
	if !slices.ContainsFunc(t.ops, func(op indexOp) bool { return op.remove || op.move || op.reset }) {
		return c, nil
	}
	err := t.QueryRowContext(ctx, `UPDATE search_generation SET gen = gen + 1 RETURNING gen`).Scan(&c.gen)
	return c, err
}

// searchPos is a position of the search index: the generation of
// search_generation (the commits that changed records indexed before
// them) and the last rid of records (every record is indexed, pending or
// not, as it is inserted). A copy at a position covers every position
// with neither part ahead of its own.
type searchPos struct{ gen, rid int64 }

func (p searchPos) covers(q searchPos) bool { return p.gen >= q.gen && p.rid >= q.rid }

// readSearchPos reads the position of the index q sees.
func readSearchPos(ctx context.Context, q queryer) (searchPos, error) {
	var p searchPos
	err := q.QueryRowContext(ctx, `SELECT gen, (SELECT COALESCE(MAX(rid), 0) FROM records) FROM search_generation`).Scan(&p.gen, &p.rid)
	return p, err
}

func (si *searchIndex) applyLocked(c committed) {
	for _, op := range c.ops {
		if op.rid > math.MaxUint32 {
			slog.Warn("search: the in-memory index holds rows up to 2³²; ranking with FTS5 from now on", "row", op.rid)
			si.x, si.over = nil, true
			si.texts.empty()
			return
		}
		switch {
		case op.remove:
			si.x.Remove(uint32(op.rid), op.body, op.key, op.at.Meta)
		case op.move:
			si.x.Move(uint32(op.rid), op.at.Part)
		default:
			si.x.Add(uint32(op.rid), op.at, op.body, op.key)
		}
	}
	if c.gen != 0 {
		si.at.gen = c.gen
	}
	if c.last != 0 {
		si.at.rid = c.last
	}
	if si.x.Bytes() > si.limit {
		slog.Warn("search: the in-memory index passed its memory bound; ranking with FTS5 from now on (raise --search-memory to keep it)",
			"bound_bytes", si.limit, "records", si.x.Rows())
		si.x, si.over = nil, true
		si.texts.empty()
	}
}

// forget drops the copy, which another connection's commit has made
// stale: the next search builds it again.
func (si *searchIndex) forget() {
	si.mu.Lock()
	if !si.building {
		si.x = nil
	}
	si.texts.empty()
	si.mu.Unlock()
}

// finishBuild installs x, built from a snapshot at at (nil if the build
// failed), after applying the changes committed since.
func (si *searchIndex) finishBuild(x *postings.Index, at searchPos) {
	si.mu.Lock()
	defer si.mu.Unlock()
	replay := si.replay
	si.building, si.replay, si.x, si.at = false, nil, x, at
	si.texts.empty()
	if x == nil {
		return
	}
	for _, c := range replay {
		if c.within(at) {
			continue // in the snapshot
		}
		if !c.follows(si.at) {
			si.x = nil
			return
		}
		si.applyLocked(c)
		if si.x == nil {
			return
		}
	}
}

// SearchIndexStats reports on the copy of the search index in memory:
// the records it holds and its memory as estimated (both 0 while it is
// not ready), and how many searches it and FTS5 have ranked since the
// store opened (FTS5 ranks while the copy is off, being built or stale).
// They are the custody_sqlite_search_* metrics.
func (s *Store) SearchIndexStats() (records, bytes, byCopy, byFTS5 int64) {
	si := &s.search
	byCopy, byFTS5 = si.byCopy.Load(), si.byFTS.Load()
	si.mu.RLock()
	defer si.mu.RUnlock()
	if si.x != nil && !si.building {
		records, bytes = si.x.Rows(), si.x.Bytes()
	}
	return records, bytes, byCopy, byFTS5
}

// PrepareSearch starts building the copy of the search index in memory
// now, rather than at the first search (serve calls it as it starts, so
// that the first searches need not wait on FTS5).
func (s *Store) PrepareSearch() { s.startSearchBuild() }

// AwaitSearchIndex waits for a build of the copy that is running to end
// (for benchmarks and tests, which measure the store as a server's is
// once it has started).
func (s *Store) AwaitSearchIndex() { s.search.builds.Wait() }
