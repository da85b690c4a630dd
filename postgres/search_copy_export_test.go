package postgres

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/internal/lexical"
)

// TuneSearchCopies sets, for one test, the largest tenant whose copy a
// search builds inline and how soon a copy is built again
// (search_copy.go).
func TuneSearchCopies(tb testing.TB, inline int, rebuild time.Duration) {
	oldInline, oldRebuild := inlineBuildRecords, rebuildEvery
	inlineBuildRecords, rebuildEvery = inline, rebuild
	tb.Cleanup(func() { inlineBuildRecords, rebuildEvery = oldInline, oldRebuild })
}

// WaitSearchBuilds waits for the copies being built on their own
// goroutines.
func (s *Store) WaitSearchBuilds() { s.copies.builds.Wait() }

// CopyMatches is how many rows of tenant's copy hold word's term; -1 if
// the copy is not built.
func (s *Store) CopyMatches(tenant, word string) int {
	tc := s.copies.tenant(tenant)
	tc.mu.RLock()
	defer tc.mu.RUnlock()
	if tc.x == nil {
		return -1
	}
	return tc.x.Matches(lexical.Document(word)[0])
}

// CopyAsked is how many records the copies' rankings have asked
// PostgreSQL about, for their eligibility.
func (s *Store) CopyAsked() int64 { return s.copies.asked.Load() }

// HoldAsideBuilds makes the copies built on their own goroutines wait,
// before they read anything, until release is called (at the test's end
// at the latest).
func HoldAsideBuilds(tb testing.TB) (release func()) {
	held := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(held) }) }
	beforeAsideBuild = func() { <-held }
	tb.Cleanup(func() {
		release()
		beforeAsideBuild = nil
	})
	return release
}

// TermMatchesByCopy is TermMatches counted by the tenant's copy alone;
// false if the copy could not count them.
func (s *Store) TermMatchesByCopy(ctx context.Context, sc custody.Scope, terms []string, bound int) ([]int, bool, error) {
	return s.termMatchesCopy(ctx, sc, terms, bound)
}

// KeptForms is how many of tenant's records its copy keeps a form of, and
// whether the bytes of those forms hold b anywhere (zeroed or dropped
// forms do not).
func (s *Store) KeptForms(tenant string, b []byte) (n int, holds bool) {
	tc := s.copies.tenant(tenant)
	tc.mu.RLock()
	defer tc.mu.RUnlock()
	for _, r := range tc.forms.at {
		if r.n > 0 {
			n++
		}
	}
	return n, bytes.Contains(tc.forms.b, b)
}

// FormsServed is how many candidates the copies gave by their kept forms.
func (s *Store) FormsServed() int64 { return s.copies.formsServed.Load() }
