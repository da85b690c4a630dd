package postgres

import (
	"testing"
	"time"
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
