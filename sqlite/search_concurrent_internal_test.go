package sqlite

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
)

// Writes, erasures, searches and builds of the copy running at once leave
// the copy in step with the database, and every search finds each record
// written before it began: the copy is never stale for a search, only
// rebuilt or bypassed.
func TestSearchCopyUnderConcurrentChanges(t *testing.T) {
	ctx := t.Context()
	defer func(n int64) { inlineBuildRows = n }(inlineBuildRows)
	inlineBuildRows = 0 // builds run beside the searches
	s := openTestStore(t, filepath.Join(t.TempDir(), "c.db"), Options{})
	const writers, each = 4, 40
	done := make(chan error, writers+2)
	for w := range writers {
		go func() {
			for i := range each {
				r := testRecord(fmt.Sprintf("writer%d wrote note%d of the plumber", w, i), "")
				if err := s.Update(ctx, func(tx custody.Tx) error { return tx.InsertRecord(ctx, r) }); err != nil {
					done <- err
					return
				}
				// Each writer finds its own record at once.
				hits, err := s.Search(ctx, custody.Scope{Tenant: "acme", Subject: "alice", Now: time.Now().Add(time.Minute)},
					custody.SearchQuery{Text: fmt.Sprintf("writer%d note%d", w, i), Limit: 5})
				if err != nil {
					done <- err
					return
				}
				if len(hits) == 0 || hits[0].ID != r.ID {
					done <- fmt.Errorf("writer %d did not find its record %d first: %d hits", w, i, len(hits))
					return
				}
				if i%10 == 9 { // and erases one now and then
					e := *r
					e.Body, e.Erased = "", true
					if err := s.Update(ctx, func(tx custody.Tx) error { return tx.UpdateRecord(ctx, &e) }); err != nil {
						done <- err
						return
					}
				}
			}
			done <- nil
		}()
	}
	go func() { // builds beside them
		for range 5 {
			s.startSearchBuild()
			s.search.builds.Wait()
		}
		done <- nil
	}()
	go func() {
		for range 50 {
			if _, err := s.Search(ctx, custody.Scope{Tenant: "acme", Subject: "alice", Now: time.Now()}, custody.SearchQuery{Text: "plumber", Limit: 20}); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for range writers + 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if err := s.pendingToFTS(ctx); err != nil {
		t.Fatal(err)
	}
	s.search.builds.Wait()
	s.search.mu.RLock()
	built := s.search.x != nil
	s.search.mu.RUnlock()
	if !built {
		buildCopyNow(t, s)
	}
	copyInStep(t, s)
	if got := searchIDs(t, s, "plumber"); len(got) != 50 { // 50 of 200 shown; all found
		t.Fatalf("plumber: %d hits, want 50 (the limit)", len(got))
	}
	if s.search.byCopy.Load() == 0 {
		t.Fatal("no search was ranked by the copy")
	}
}
