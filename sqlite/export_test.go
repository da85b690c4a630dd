package sqlite

import (
	"maps"
	"slices"
)

// CachedQueries returns the texts of the statements the store keeps
// prepared, the writer's and the readers'. The writer prepares a batch's
// new statements after answering it: call this after one more Update.
func CachedQueries(s *Store) []string {
	var qs []string
	for _, c := range []*stmtCache{s.wstmts, s.rstmts} {
		c.mu.Lock()
		qs = append(qs, slices.Collect(maps.Keys(c.m))...)
		c.mu.Unlock()
	}
	return qs
}
