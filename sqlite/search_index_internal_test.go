package sqlite

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/internal/postings"
	"github.com/oklog/ulid/v2"
)

// buildCopyNow builds the store's copy of the search index on the calling
// goroutine, as the first search would on one of its own.
func buildCopyNow(t *testing.T, s *Store) {
	t.Helper()
	s.search.builds.Wait()
	if !s.claimBuild() {
		t.Fatal("a build of the copy is already running, or the copy is off")
	}
	s.buildSearchIndex(t.Context())
	s.search.mu.RLock()
	defer s.search.mu.RUnlock()
	if s.search.x == nil {
		t.Fatal("no copy of the search index was built")
	}
}

// copyInStep fails t unless the store's copy holds the generation in
// search_generation and the same postings as a copy built afresh from the
// database.
func copyInStep(t *testing.T, s *Store) {
	t.Helper()
	fresh, at, err := s.readSearchIndex(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	s.search.mu.RLock()
	defer s.search.mu.RUnlock()
	switch {
	case s.search.x == nil:
		t.Fatal("the store holds no copy of the search index")
	case s.search.at != at:
		t.Fatalf("the copy holds position %+v, the database %+v", s.search.at, at)
	case !s.search.x.Equal(fresh):
		t.Fatalf("the copy (%d rows) differs from one built afresh (%d rows)", s.search.x.Rows(), fresh.Rows())
	}
}

var (
	entropyMu     sync.Mutex
	recordEntropy = ulid.Monotonic(rand.NewChaCha8([32]byte{7}), 0)
)

// testRecord is an admitted fact of alice's.
func testRecord(body, key string) *custody.Record {
	at := time.Now()
	entropyMu.Lock()
	id := ulid.MustNew(ulid.Timestamp(at), recordEntropy).String()
	entropyMu.Unlock()
	return &custody.Record{ID: id, Tenant: "acme", Owner: "alice",
		Namespace: "n", Key: key, Class: custody.ClassFact, Body: body, Channel: custody.ChannelUser,
		Writer: "acme/alice", Authority: custody.AuthorityUser, Audience: custody.AudienceOwner,
		State: custody.StateAdmitted, CreatedAt: at, Version: 1, Parents: []custody.Edge{}}
}

func putRecords(t *testing.T, s *Store, rs ...*custody.Record) {
	t.Helper()
	err := s.Update(t.Context(), func(tx custody.Tx) error {
		for _, r := range rs {
			if err := tx.InsertRecord(t.Context(), r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func searchIDs(t *testing.T, s *Store, text string) []string {
	t.Helper()
	hits, err := s.Search(t.Context(), custody.Scope{Tenant: "acme", Subject: "alice", Now: time.Now().Add(time.Minute)}, custody.SearchQuery{Text: text, Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	slices.Sort(ids)
	return ids
}

func openTestStore(t *testing.T, path string, o Options) *Store {
	t.Helper()
	s, err := open(t.Context(), path, time.Hour, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// The writer keeps the copy in step with the records through every change
// it makes: records inserted (the copy takes them at their commit, while
// they wait in index_pending), a batch whose write rolls back to its
// savepoint after moving records into FTS5 and whose next write takes
// the rid it freed, an erasure (of a record with metadata), and a rebuild
// of the whole index.
func TestSearchCopyKeptInStep(t *testing.T) {
	ctx := t.Context()
	s := openTestStore(t, filepath.Join(t.TempDir(), "c.db"), Options{})
	putRecords(t, s, testRecord("the plumber sent an invoice", ""), testRecord("garden budget", "k1"))
	buildCopyNow(t, s)
	copyInStep(t, s)

	a, b := testRecord("ledger for the plumber", ""), testRecord("plumber plumber key", "plumber")
	a.Metadata = custody.Metadata{"project": "apollo"} // the erasure below takes it out of the copy's pairs
	putRecords(t, s, a, b)
	if got := searchIDs(t, s, "plumber"); len(got) != 3 { // pending, in the copy
		t.Fatalf("plumber: %d hits, want 3", len(got))
	}
	copyInStep(t, s)

	// One write of a batch moves records in and then fails: its savepoint
	// takes the move back, and the other writes' records stay pending; the
	// last takes the rid the failed one freed.
	kept, undone, after := testRecord("kept ledger entry", ""), testRecord("undone ledger entry", ""), testRecord("later ledger entry", "")
	errUndo := errors.New("undo")
	errs := s.UpdateEach(ctx,
		func(tx custody.Tx) error { return tx.InsertRecord(ctx, kept) },
		func(tx custody.Tx) error {
			if err := tx.InsertRecord(ctx, undone); err != nil {
				return err
			}
			if _, err := tx.(*txn).flushPending(ctx); err != nil {
				return err
			}
			return errUndo
		},
		func(tx custody.Tx) error { return tx.InsertRecord(ctx, after) })
	if errs[0] != nil || !errors.Is(errs[1], errUndo) || errs[2] != nil {
		t.Fatalf("batch: %v", errs)
	}
	copyInStep(t, s)
	if got := searchIDs(t, s, "ledger"); !slices.Equal(got, sorted(a.ID, kept.ID, after.ID)) {
		t.Fatalf("ledger: %v, want %v", got, sorted(a.ID, kept.ID, after.ID))
	}
	copyInStep(t, s)
	// The failed write last: the copy's last rid is the last one kept.
	errs = s.UpdateEach(ctx,
		func(tx custody.Tx) error { return tx.InsertRecord(ctx, testRecord("a gardening note", "")) },
		func(tx custody.Tx) error {
			if err := tx.InsertRecord(ctx, testRecord("undone gardening note", "")); err != nil {
				return err
			}
			return errUndo
		})
	if errs[0] != nil || !errors.Is(errs[1], errUndo) {
		t.Fatalf("batch: %v", errs)
	}
	copyInStep(t, s)

	// Shared with the tenant, alice's record is found by bob; and not once
	// it is hers alone again (the copy ranks by partition).
	bobFinds := func() bool {
		hits, err := s.Search(ctx, custody.Scope{Tenant: "acme", Subject: "bob", Now: time.Now().Add(time.Minute)}, custody.SearchQuery{Text: "kept ledger", Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		return len(hits) == 1 && hits[0].ID == kept.ID
	}
	if bobFinds() {
		t.Fatal("bob finds alice's own record")
	}
	for _, audience := range []string{custody.AudienceTenant, custody.AudienceOwner} {
		shared := *kept
		shared.Audience = audience
		if err := s.Update(ctx, func(tx custody.Tx) error { return tx.UpdateRecord(ctx, &shared) }); err != nil {
			t.Fatal(err)
		}
		copyInStep(t, s)
		if got := bobFinds(); got != (audience == custody.AudienceTenant) {
			t.Fatalf("audience %s: bob finds it %v", audience, got)
		}
	}

	erased := *a
	erased.Body, erased.Erased = "", true
	if err := s.Update(ctx, func(tx custody.Tx) error { return tx.UpdateRecord(ctx, &erased) }); err != nil {
		t.Fatal(err)
	}
	copyInStep(t, s)
	if got := searchIDs(t, s, "ledger"); !slices.Equal(got, sorted(kept.ID, after.ID)) {
		t.Fatalf("ledger after the erasure: %v, want only %s and %s", got, kept.ID, after.ID)
	}

	// A rebuild of the index drops the copy; the next build is in step.
	if err := s.Reindex(ctx, nil); err != nil {
		t.Fatal(err)
	}
	s.search.mu.RLock()
	dropped := s.search.x == nil
	s.search.mu.RUnlock()
	if !dropped {
		t.Fatal("the copy outlived a rebuild of the index")
	}
	if got := searchIDs(t, s, "plumber"); len(got) != 2 {
		t.Fatalf("plumber after the rebuild: %d hits, want 2", len(got))
	}
	buildCopyNow(t, s)
	copyInStep(t, s)
	if got := searchIDs(t, s, "plumber"); len(got) != 2 {
		t.Fatalf("plumber with the new copy: %d hits, want 2", len(got))
	}
}

func sorted(ids ...string) []string {
	slices.Sort(ids)
	return ids
}

// Records moved into the index while a build reads its snapshot reach the
// copy: the build applies the generations committed after its snapshot.
func TestSearchCopyBuildReplaysCommits(t *testing.T) {
	s := openTestStore(t, filepath.Join(t.TempDir(), "c.db"), Options{})
	putRecords(t, s, testRecord("before the build", ""))
	late := testRecord("written during the build", "")
	afterSearchSnapshot = func() {
		putRecords(t, s, late)
		if err := s.pendingToFTS(t.Context()); err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(func() { afterSearchSnapshot = nil })
	buildCopyNow(t, s)
	afterSearchSnapshot = nil
	copyInStep(t, s)
	before := s.search.byCopy.Load()
	if got := searchIDs(t, s, "written during"); !slices.Equal(got, []string{late.ID}) {
		t.Fatalf("got %v, want the record written during the build", got)
	}
	if s.search.byCopy.Load() != before+1 {
		t.Fatal("the search was not ranked by the copy")
	}
}

// Another connection's commit to the same file (another process's) never
// leaves a search on a stale copy: the search that sees its generation
// ranks with FTS5, and so does the store's own next commit, which finds
// the generations not in sequence; the copy is then built again, and
// holds both.
func TestSearchCopySeesAnotherConnection(t *testing.T) {
	// As on a large store: a search never builds the copy itself; and
	// builds it again as often as it finds it stale.
	defer func(n int64, d time.Duration) { inlineBuildRows, rebuildEvery = n, d }(inlineBuildRows, rebuildEvery)
	inlineBuildRows, rebuildEvery = 0, 0
	path := filepath.Join(t.TempDir(), "c.db")
	s := openTestStore(t, path, Options{})
	putRecords(t, s, testRecord("first plumber", ""))
	buildCopyNow(t, s)
	// Without another connection, the copy ranks.
	if got := searchIDs(t, s, "plumber"); len(got) != 1 || s.search.byFTS.Load() != 0 {
		t.Fatalf("%d hits, %d by FTS5; want 1 by the copy", len(got), s.search.byFTS.Load())
	}

	other := openTestStore(t, path, Options{SearchMemory: -1})
	theirs := testRecord("their plumber", "")
	putRecords(t, other, theirs)
	if err := other.pendingToFTS(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := searchIDs(t, s, "plumber"); len(got) != 2 {
		t.Fatalf("after another connection's write: %d hits, want 2", len(got))
	}
	if s.search.byFTS.Load() != 1 {
		t.Fatal("the search after another connection's commit was not ranked by FTS5")
	}
	s.search.builds.Wait() // the build that search started
	copyInStep(t, s)

	// Their commit, then ours: ours finds the generations out of sequence.
	theirs2 := testRecord("another of their plumbers", "")
	putRecords(t, other, theirs2)
	if err := other.pendingToFTS(t.Context()); err != nil {
		t.Fatal(err)
	}
	ours := testRecord("our plumber", "")
	putRecords(t, s, ours)
	if err := s.pendingToFTS(t.Context()); err != nil {
		t.Fatal(err)
	}
	s.search.mu.RLock()
	stale := s.search.x != nil
	s.search.mu.RUnlock()
	if stale {
		t.Fatal("the copy was kept after a commit that skipped another connection's generation")
	}
	if got := searchIDs(t, s, "plumber"); len(got) != 4 {
		t.Fatalf("%d hits, want 4", len(got))
	}
	s.search.builds.Wait()
	copyInStep(t, s)
}

// A copy that would pass its memory bound is dropped, and FTS5 ranks the
// same searches with the same results.
func TestSearchCopyMemoryBound(t *testing.T) {
	dir := t.TempDir()
	var rs []*custody.Record
	for i := range 200 {
		rs = append(rs, testRecord(fmt.Sprintf("note %d about the plumber and invoice %d", i, i%7), ""))
	}
	bounded := openTestStore(t, filepath.Join(dir, "a.db"), Options{SearchMemory: 1024})
	roomy := openTestStore(t, filepath.Join(dir, "b.db"), Options{})
	for _, s := range []*Store{bounded, roomy} {
		putRecords(t, s, rs...)
		searchIDs(t, s, "plumber") // moves them in, and starts a build
		s.search.builds.Wait()
	}
	bounded.search.mu.RLock()
	over, kept := bounded.search.over, bounded.search.x != nil
	bounded.search.mu.RUnlock()
	if !over || kept {
		t.Fatalf("a 1 KiB bound: over %v, copy kept %v; want the copy dropped", over, kept)
	}
	copyInStep(t, roomy)
	for _, q := range []string{"plumber", "invoice 3", "note 17"} {
		if a, b := searchIDs(t, bounded, q), searchIDs(t, roomy, q); !slices.Equal(a, b) || len(a) == 0 {
			t.Fatalf("%q: FTS5 found %v, the copy %v", q, a, b)
		}
	}
	terms := []string{"plumber", "invoic", "3", "note", "absent"}
	alice := custody.Scope{Tenant: "acme", Subject: "alice", Now: time.Now().Add(time.Minute)}
	a, err := bounded.TermMatches(t.Context(), alice, terms, 50)
	if err != nil {
		t.Fatal(err)
	}
	b, err := roomy.TermMatches(t.Context(), alice, terms, 50)
	if err != nil || !slices.Equal(a, b) || a[0] != 50 || a[4] != 0 {
		t.Fatalf("TermMatches: FTS5 %v, the copy %v (%v)", a, b, err)
	}
	if bounded.search.byCopy.Load() != 0 || roomy.search.byCopy.Load() == 0 {
		t.Fatal("the bounded store ranked by a copy, or the other never did")
	}
}

// A schema 18 store, which has no search_generation, gains it at open,
// and its searches are then ranked by the copy.
func TestSearchGenerationMigrates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	r := testRecord("an older store's plumber", "")
	putRecords(t, s, r)
	if _, err := s.DB().ExecContext(t.Context(), `DROP TABLE search_generation; PRAGMA user_version = 18`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openTestStore(t, path, Options{})
	var gen, v int64
	if err := s.r.QueryRowContext(t.Context(), `SELECT (SELECT gen FROM search_generation), (SELECT user_version FROM pragma_user_version)`).Scan(&gen, &v); err != nil {
		t.Fatal(err)
	}
	if gen != 0 || v != schemaVersion {
		t.Fatalf("generation %d, schema %d; want 0 and %d", gen, v, schemaVersion)
	}
	buildCopyNow(t, s)
	if got := searchIDs(t, s, "plumber"); !slices.Equal(got, []string{r.ID}) || s.search.byCopy.Load() != 1 {
		t.Fatalf("got %v (%d ranked by the copy), want %s ranked by the copy", got, s.search.byCopy.Load(), r.ID)
	}
	copyInStep(t, s)
}

// On a small store the first search builds the copy itself and is ranked
// by it; on a large one (past inlineBuildRows) it is ranked by FTS5 while
// the copy is built on a goroutine of its own.
func TestSearchCopyFirstSearch(t *testing.T) {
	defer func(n int64) { inlineBuildRows = n }(inlineBuildRows)
	for _, large := range []bool{false, true} {
		inlineBuildRows = 20000
		if large {
			inlineBuildRows = 1
		}
		s := openTestStore(t, filepath.Join(t.TempDir(), "c.db"), Options{})
		r := testRecord("the first plumber", "")
		putRecords(t, s, r, testRecord("a second record", ""))
		if got := searchIDs(t, s, "plumber"); !slices.Equal(got, []string{r.ID}) {
			t.Fatalf("large %v: got %v, want %s", large, got, r.ID)
		}
		if byCopy := s.search.byCopy.Load(); byCopy != 1 && !large || byCopy != 0 && large {
			t.Fatalf("large %v: %d searches ranked by the copy", large, byCopy)
		}
		s.search.builds.Wait()
		copyInStep(t, s)
	}
}

// While another process keeps writing to the same file, the copy is built
// again at most every rebuildEvery: in between, FTS5 ranks, and finds
// every record.
func TestSearchCopyRebuildsAtMostEvery(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	s := openTestStore(t, path, Options{})
	putRecords(t, s, testRecord("first plumber", ""))
	buildCopyNow(t, s)
	other := openTestStore(t, path, Options{SearchMemory: -1})
	for i := range 3 {
		putRecords(t, other, testRecord(fmt.Sprintf("their plumber %d", i), ""))
		if err := other.pendingToFTS(t.Context()); err != nil {
			t.Fatal(err)
		}
		fts := s.search.byFTS.Load()
		if got := searchIDs(t, s, "plumber"); len(got) != 2+i {
			t.Fatalf("after their write %d: %d hits, want %d", i, len(got), 2+i)
		}
		s.search.mu.RLock()
		building := s.search.building
		s.search.mu.RUnlock()
		if s.search.byFTS.Load() != fts+1 || building {
			t.Fatalf("after their write %d: not ranked by FTS5, or a build started (%v) within %v of the last", i, building, rebuildEvery)
		}
	}
	// Once rebuildEvery has passed, the next search builds it again.
	s.search.mu.Lock()
	s.search.lastBuild = time.Now().Add(-rebuildEvery)
	s.search.mu.Unlock()
	searchIDs(t, s, "plumber")
	s.search.builds.Wait()
	copyInStep(t, s)
}

// A search that read the generation before the writer's next commit
// finds the copy a generation ahead of it: it ranks with the copy, and
// neither falls back to FTS5 nor drops the copy to build it again, even
// long after the last build; a copy behind the database (another
// connection's commit) is still built again.
func TestSearchCopyAheadOfTheSearch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	s := openTestStore(t, path, Options{})
	putRecords(t, s, testRecord("first plumber", ""))
	buildCopyNow(t, s)
	at, err := s.searchAt(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	putRecords(t, s, testRecord("second plumber", ""))
	if err := s.pendingToFTS(t.Context()); err != nil { // the copy holds it since its commit; the move changes nothing for it
		t.Fatal(err)
	}
	s.search.mu.Lock()
	s.search.lastBuild = time.Now().Add(-2 * rebuildEvery)
	held := s.search.at
	s.search.mu.Unlock()
	if want := (searchPos{at.gen, at.rid + 1}); held != want {
		t.Fatalf("the copy holds position %+v, want %+v (one record further)", held, want)
	}
	var sc postings.Scratch
	f := postings.QueryFilter(searchParts(custody.Scope{Tenant: "acme", Subject: "alice"}), searchOwner("acme", "alice"), time.Now(), custody.SearchQuery{})
	hits, _, ok := s.rankCopy(t.Context(), []string{"plumber"}, f, at, &sc)
	s.search.mu.RLock()
	building, dropped := s.search.building, s.search.x == nil
	s.search.mu.RUnlock()
	if !ok || len(hits) != 2 || building || dropped {
		t.Fatalf("a search a generation behind the copy: ranked by the copy %v (%d hits), build started %v, copy dropped %v; want the copy's 2 hits and no build", ok, len(hits), building, dropped)
	}
	// Behind the database: another connection wrote.
	other := openTestStore(t, path, Options{SearchMemory: -1})
	putRecords(t, other, testRecord("their plumber", ""))
	if err := other.pendingToFTS(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := searchIDs(t, s, "plumber"); len(got) != 3 {
		t.Fatalf("after their write: %d hits, want 3", len(got))
	}
	s.search.builds.Wait()
	copyInStep(t, s)
}
