package sqlite

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/embed"
	"github.com/custody-mem/custody/internal/postings"
)

// candidateTexts is CandidateTexts for alice: the texts given, by id, and
// how many of them the kept texts answered for.
func candidateTexts(t *testing.T, s *Store, q custody.SearchQuery) (map[string]string, int64) {
	t.Helper()
	before := s.search.textsKept.Load()
	got := map[string]string{}
	sc := custody.Scope{Tenant: "acme", Subject: "alice", Now: time.Now().Add(time.Minute)}
	if _, err := s.CandidateTexts(t.Context(), sc, q, strings.Fields(q.Text), 400, func(c *custody.CandidateText) {
		got[c.ID] = c.Body
	}); err != nil {
		t.Fatal(err)
	}
	return got, s.search.textsKept.Load() - before
}

// twoPlumbers is a store with the copy built over two of alice's facts
// that mention a plumber (b keyed keyB), and the query that finds both.
func twoPlumbers(t *testing.T, keyA, keyB string) (*Store, *custody.Record, *custody.Record, custody.SearchQuery) {
	t.Helper()
	s := openTestStore(t, filepath.Join(t.TempDir(), "c.db"), Options{})
	a, b := testRecord("the plumber sent an invoice", keyA), testRecord("the plumber fixed the sink", keyB)
	putRecords(t, s, a, b)
	buildCopyNow(t, s)
	return s, a, b, custody.SearchQuery{Text: "plumber", Limit: 10}
}

// A ranking read again before it is returned (the semantic list's
// candidates) takes the texts of the records it read before from the
// store's memory, not from their rows; every answer is the one read from
// the rows.
func TestSearchTextsServeTheCandidates(t *testing.T) {
	s, a, b, q := twoPlumbers(t, "", "k1")
	first, kept := candidateTexts(t, s, q)
	if want := map[string]string{a.ID: a.Body, b.ID: b.Body}; !maps.Equal(first, want) || kept != 0 {
		t.Fatalf("first read: %v (%d kept), want %v read from the rows", first, kept, want)
	}
	again, kept := candidateTexts(t, s, q)
	if !maps.Equal(again, first) || kept != 2 {
		t.Fatalf("second read: %v with %d kept, want the same texts, both kept", again, kept)
	}
	// Search returns the rows it reads: it checks each in SQL, kept or not.
	before := s.search.textsKept.Load()
	if got := searchIDs(t, s, "plumber"); len(got) != 2 || s.search.textsKept.Load() != before {
		t.Fatalf("Search found %v, with %d kept texts; want both, read from their rows", got, s.search.textsKept.Load()-before)
	}
}

// An erased body leaves the kept texts as the erasure commits: no ranking
// after it scores the old body, while the other records stay kept.
func TestSearchTextsForgetAnErasedBody(t *testing.T) {
	ctx := t.Context()
	s, a, b, q := twoPlumbers(t, "", "")
	candidateTexts(t, s, q)
	if n, _ := s.search.texts.held(); n != 2 {
		t.Fatalf("%d texts kept, want 2", n)
	}
	erased := *a
	erased.Body, erased.Erased = "", true
	if err := s.Update(ctx, func(tx custody.Tx) error { return tx.UpdateRecord(ctx, &erased) }); err != nil {
		t.Fatal(err)
	}
	got, kept := candidateTexts(t, s, q)
	if _, ok := got[a.ID]; ok || got[b.ID] != b.Body || kept != 1 {
		t.Fatalf("after the erasure: %v with %d kept; want only %s's text, kept", got, kept, b.ID)
	}
	if s.search.texts.holds(ridOf(t, s, a.ID), "invoice") {
		t.Fatal("the erased body is still kept")
	}
}

// holds reports whether the texts keep record rid, or hold the bytes of
// sub in any chunk (a body left in memory they keep).
func (t *searchTexts) holds(rid int64, sub string) bool {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if _, ok := t.m[uint32(rid)]; ok {
		return true
	}
	for _, c := range t.chunks {
		if strings.Contains(string(c.b), sub) {
			return true
		}
	}
	return false
}

// A record that leaves the caller's reach (quarantined, or shared with no
// one the caller is) leaves the ranking with its text kept: the copy
// moved it, and a kept text does not make a record eligible.
func TestSearchTextsFollowEligibility(t *testing.T) {
	ctx := t.Context()
	s, a, b, q := twoPlumbers(t, "", "")
	if got, _ := candidateTexts(t, s, q); len(got) != 2 {
		t.Fatalf("before: %v, want both", got)
	}
	quarantined := *a
	quarantined.State = custody.StateQuarantined
	if err := s.Update(ctx, func(tx custody.Tx) error { return tx.UpdateRecord(ctx, &quarantined) }); err != nil {
		t.Fatal(err)
	}
	if got, kept := candidateTexts(t, s, q); len(got) != 1 || got[b.ID] == "" || kept != 1 {
		t.Fatalf("after quarantining %s: %v (%d kept), want only %s", a.ID, got, kept, b.ID)
	}
	// Another subject of the tenant sees neither: they are alice's alone.
	sc := custody.Scope{Tenant: "acme", Subject: "bob", Now: time.Now().Add(time.Minute)}
	n := 0
	if _, err := s.CandidateTexts(ctx, sc, q, []string{"plumber"}, 400, func(*custody.CandidateText) { n++ }); err != nil || n != 0 {
		t.Fatalf("bob was given %d of alice's texts (%v)", n, err)
	}
	// Admitted again, it is back, its text still kept.
	if err := s.Update(ctx, func(tx custody.Tx) error { return tx.UpdateRecord(ctx, a) }); err != nil {
		t.Fatal(err)
	}
	if got, kept := candidateTexts(t, s, q); len(got) != 2 || kept != 2 {
		t.Fatalf("admitted again: %v (%d kept), want both, kept", got, kept)
	}
}

// A query filtering by what the copy keeps loosely (metadata, creation
// time, key prefix) checks every record in SQL: the copy's answer is not
// the store's there.
func TestSearchTextsNotForLooseFilters(t *testing.T) {
	s := openTestStore(t, filepath.Join(t.TempDir(), "c.db"), Options{})
	a, b := testRecord("the plumber sent an invoice", "bill/1"), testRecord("the plumber fixed the sink", "sink/1")
	putRecords(t, s, a, b)
	buildCopyNow(t, s)
	candidateTexts(t, s, custody.SearchQuery{Text: "plumber", Limit: 10}) // both kept
	after := a.CreatedAt.Add(-time.Hour)
	for _, f := range []custody.Filters{{KeyPrefix: "bill/"}, {CreatedAfter: &after}, {Metadata: custody.Metadata{"vendor": "acme"}}} {
		got, kept := candidateTexts(t, s, custody.SearchQuery{Text: "plumber", Limit: 10, Filters: f})
		if kept != 0 {
			t.Fatalf("filters %+v: %d kept texts used", f, kept)
		}
		switch {
		case f.KeyPrefix != "" && (len(got) != 1 || got[a.ID] == ""):
			t.Fatalf("key prefix: %v, want only %s", got, a.ID)
		case f.CreatedAfter != nil && len(got) != 2:
			t.Fatalf("created after: %v, want both", got)
		case f.Metadata != nil && len(got) != 0:
			t.Fatalf("metadata: %v, want none", got)
		}
	}
}

// A commit of another connection empties the kept texts with the copy:
// this store never sees its changes, an erasure among them.
func TestSearchTextsEmptiedByAnotherConnection(t *testing.T) {
	defer func(n int64, d time.Duration) { inlineBuildRows, rebuildEvery = n, d }(inlineBuildRows, rebuildEvery)
	inlineBuildRows, rebuildEvery = 0, 0
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "c.db")
	s := openTestStore(t, path, Options{})
	a, b := testRecord("the plumber sent an invoice", ""), testRecord("the plumber fixed the sink", "")
	putRecords(t, s, a, b)
	buildCopyNow(t, s)
	q := custody.SearchQuery{Text: "plumber", Limit: 10}
	candidateTexts(t, s, q)
	other := openTestStore(t, path, Options{SearchMemory: -1})
	erased := *a
	erased.Body, erased.Erased = "", true
	if err := other.Update(ctx, func(tx custody.Tx) error { return tx.UpdateRecord(ctx, &erased) }); err != nil {
		t.Fatal(err)
	}
	got, kept := candidateTexts(t, s, q) // ranked by FTS5: the copy is stale
	if _, ok := got[a.ID]; ok || kept != 0 {
		t.Fatalf("after their erasure: %v (%d kept), want no text of %s", got, kept, a.ID)
	}
	s.search.builds.Wait()
	if n, _ := s.search.texts.held(); n != 0 {
		t.Fatalf("%d texts kept across the rebuild", n)
	}
	got, _ = candidateTexts(t, s, q) // the copy again
	if _, ok := got[a.ID]; ok || got[b.ID] != b.Body {
		t.Fatalf("with the copy rebuilt: %v, want only %s", got, b.ID)
	}
}

// A read begun before a removal keeps nothing; the texts keep to their
// bound, dropping the oldest past it.
func TestSearchTextsEpochAndBound(t *testing.T) {
	texts := searchTexts{limit: 100 * (keptOverhead + 30)}
	row := func(rid int64, epoch uint64) []eligibleHit {
		return []eligibleHit{{rid: rid, id: "01JD0000000000000000000000", key: "", body: "four", read: true, epoch: epoch}}
	}
	e := texts.begin()
	texts.remove(7)
	texts.keep(slices.Values(row(7, e)))
	if n, _ := texts.held(); n != 0 {
		t.Fatal("a read begun before a removal was kept")
	}
	texts.keep(slices.Values(row(7, texts.begin())))
	got := make([]eligibleHit, 2)
	if missing := texts.take([]postings.Hit{{Row: 7}, {Row: 8}}, got); len(missing) != 1 || missing[0].Row != 8 || got[0].body != "four" || got[1].rid != 0 {
		t.Fatalf("take: missing %v, got %v", missing, got)
	}
	// A form kept for a record replaces its text, and a chunk left with
	// less than half of it in use is written again, without the texts
	// replaced.
	compacted := searchTexts{limit: 64 << 10} // chunks of 4 KiB
	for rid := range int64(60) {
		e := row(rid, compacted.begin())[0]
		e.body = fmt.Sprintf("text of %d: %s", rid, strings.Repeat("w", 40))
		compacted.keep(slices.Values([]eligibleHit{e}))
	}
	for rid := range int64(40) {
		e := row(rid, compacted.begin())[0]
		e.form = embed.Form(fmt.Sprintf("form of %d", rid))
		compacted.keep(slices.Values([]eligibleHit{e}))
	}
	if compacted.holds(-1, "text of 3:") {
		t.Fatal("a text replaced by its form is still held: its chunk was not compacted")
	}
	for rid := range int64(60) {
		got := make([]eligibleHit, 1)
		compacted.take([]postings.Hit{{Row: uint32(rid)}}, got)
		if rid < 40 && string(got[0].form) != fmt.Sprintf("form of %d", rid) || rid >= 40 && !strings.HasPrefix(got[0].body, fmt.Sprintf("text of %d:", rid)) {
			t.Fatalf("record %d given back as %+v after compaction", rid, got[0])
		}
	}
	for rid := range int64(1000) {
		texts.keep(slices.Values(row(rid, texts.begin())))
		if _, bytes := texts.held(); bytes > texts.limit {
			t.Fatalf("%d bytes kept, past the bound of %d", bytes, texts.limit)
		}
	}
	if n, _ := texts.held(); n < 40 || n > 100 {
		t.Fatalf("%d texts kept under a bound of 100", n)
	}
	if _, newest := texts.m[999]; !newest {
		t.Fatal("the newest text was dropped")
	}
	if _, oldest := texts.m[0]; oldest {
		t.Fatal("the oldest text outlived the bound")
	}
	texts.empty()
	if n, bytes := texts.held(); n != 0 || bytes != 0 {
		t.Fatalf("emptied: %d texts, %d bytes", n, bytes)
	}
}

// The form a scorer derives from a candidate's text is kept with the
// text and given back with it; it leaves with an erased body.
func TestSearchTextsKeepTheForms(t *testing.T) {
	ctx := t.Context()
	s := openTestStore(t, filepath.Join(t.TempDir(), "c.db"), Options{})
	a, b := testRecord("the plumber sent an invoice", ""), testRecord("the plumber fixed the sink", "")
	putRecords(t, s, a, b)
	buildCopyNow(t, s)
	sc := custody.Scope{Tenant: "acme", Subject: "alice", Now: time.Now().Add(time.Minute)}
	q := custody.SearchQuery{Text: "plumber", Limit: 10}
	forms := func(derive bool) map[string]string {
		got := map[string]string{}
		if _, err := s.CandidateTexts(ctx, sc, q, []string{"plumber"}, 400, func(c *custody.CandidateText) {
			if c.Form != nil {
				got[c.ID] = string(c.Form)
			} else if derive {
				c.Form = embed.Form("form of " + c.Body)
			}
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := forms(true); len(got) != 0 {
		t.Fatalf("forms before any was derived: %v", got)
	}
	if got := forms(false); got[a.ID] != "form of "+a.Body || got[b.ID] != "form of "+b.Body {
		t.Fatalf("forms given back: %v, want each text's", got)
	}
	if _, bytes := s.search.texts.held(); bytes < len("form of ")*2 {
		t.Fatalf("%d bytes kept: the forms are not counted", bytes)
	}
	erased := *a
	erased.Body, erased.Erased = "", true
	if err := s.Update(ctx, func(tx custody.Tx) error { return tx.UpdateRecord(ctx, &erased) }); err != nil {
		t.Fatal(err)
	}
	if got := forms(false); len(got) != 1 || got[b.ID] != "form of "+b.Body {
		t.Fatalf("after erasing %s: forms %v, want only %s's", a.ID, got, b.ID)
	}
	if s.search.texts.holds(ridOf(t, s, a.ID), "invoice") {
		t.Fatal("the erased body's form is still kept")
	}
}

// An erasure committed while the copy is dropped still takes the body
// out of the texts: a search that ranked before the drop may have kept
// it after the drop emptied them.
func TestSearchTextsForgetAnErasureWithoutACopy(t *testing.T) {
	ctx := t.Context()
	s, a, b, q := twoPlumbers(t, "", "")
	candidateTexts(t, s, q)
	s.search.mu.Lock()
	s.search.x = nil // dropped, its texts kept by a search in flight
	s.search.mu.Unlock()
	erased := *a
	erased.Body, erased.Erased = "", true
	if err := s.Update(ctx, func(tx custody.Tx) error { return tx.UpdateRecord(ctx, &erased) }); err != nil {
		t.Fatal(err)
	}
	s.search.texts.mu.RLock()
	defer s.search.texts.mu.RUnlock()
	if _, ok := s.search.texts.m[uint32(ridOf(t, s, a.ID))]; ok {
		t.Fatal("the erased body is still kept")
	}
	if _, ok := s.search.texts.m[uint32(ridOf(t, s, b.ID))]; !ok {
		t.Fatal("the other record's text was dropped with it")
	}
}

func ridOf(t *testing.T, s *Store, id string) int64 {
	t.Helper()
	var rid int64
	if err := s.DB().QueryRowContext(t.Context(), `SELECT rid FROM records WHERE id = ?`, id).Scan(&rid); err != nil {
		t.Fatal(err)
	}
	return rid
}

// A kept form a scorer cannot score (another embedder's) is given again
// with its text, read from its row: the candidate is scored all the same.
func TestSearchTextsGiveTheTextForAFormRefused(t *testing.T) {
	ctx := t.Context()
	s, a, b, q := twoPlumbers(t, "", "")
	sc := custody.Scope{Tenant: "acme", Subject: "alice", Now: time.Now().Add(time.Minute)}
	derive := func(c *custody.CandidateText) {
		if c.Form == nil {
			c.Form = embed.Form("form of " + c.Body)
		}
	}
	if _, err := s.CandidateTexts(ctx, sc, q, []string{"plumber"}, 400, derive); err != nil {
		t.Fatal(err)
	}
	bodies, partial := map[string]string{}, 0
	refuse := func(c *custody.CandidateText) {
		if c.Partial {
			partial++
			c.Form = nil // not this scorer's
			return
		}
		bodies[c.ID] = c.Body
	}
	if _, err := s.CandidateTexts(ctx, sc, q, []string{"plumber"}, 400, refuse); err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{a.ID: a.Body, b.ID: b.Body}; partial != 2 || !maps.Equal(bodies, want) {
		t.Fatalf("%d forms given alone, then texts %v; want 2, then %v", partial, bodies, want)
	}
}
