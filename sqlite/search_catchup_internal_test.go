package sqlite

import (
	"path/filepath"
	"runtime"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/internal/postings"
)

// TestSearchWaitsForTheWritersCommit: a search that read the generation
// of a commit the writer has yet to give the copy waits for it and ranks
// with the copy, not with FTS5; its twin: a commit that is not given to
// the copy within catchUpWait leaves the search to FTS5 (it does not wait
// longer).
func TestSearchWaitsForTheWritersCommit(t *testing.T) {
	s := openTestStore(t, filepath.Join(t.TempDir(), "c.db"), Options{})
	putRecords(t, s, testRecord("first plumber", ""))
	buildCopyNow(t, s)
	s.search.mu.RLock()
	held := s.search.at
	s.search.mu.RUnlock()
	f := postings.QueryFilter(searchParts(custody.Scope{Tenant: "acme", Subject: "alice"}), searchOwner("acme", "alice"), time.Now(), custody.SearchQuery{})
	rank := func() chan bool {
		done := make(chan bool, 1)
		go func() {
			var sc postings.Scratch
			_, _, ok := s.rankCopy(t.Context(), []string{"plumber"}, f, searchPos{held.gen + 1, held.rid}, &sc)
			done <- ok
		}()
		return done
	}
	_, _, _, fts0 := s.SearchIndexStats()
	s.search.willApply()
	done := rank()
	for s.search.waiting.Load() == 0 { // until the search waits
		select {
		case ok := <-done:
			t.Fatalf("a search of the generation being committed did not wait for the copy (ranked by the copy: %v)", ok)
		default:
			runtime.Gosched()
		}
	}
	s.search.apply(committed{gen: held.gen + 1}, true)
	if ok := <-done; !ok {
		t.Error("a search of the generation being committed ranked with FTS5; want it to wait for the copy")
	}
	if _, _, _, fts := s.SearchIndexStats(); fts != fts0 {
		t.Errorf("%d rankings by FTS5, want none", fts-fts0)
	}
	held.gen++
	s.search.willApply()
	if ok := <-rank(); ok {
		t.Error("a search ranked with a copy that does not hold its generation")
	}
	s.search.apply(committed{}, false)
	if _, _, _, fts := s.SearchIndexStats(); fts != fts0+1 {
		t.Errorf("%d rankings by FTS5 after the commit not given to the copy, want 1", fts-fts0)
	}
}
