package sqlite

import "github.com/custody-mem/custody/internal/lexical"

// CopyMatches is how many records of the in-memory copy of the search
// index hold word's term; -1 if the copy is not built.
func CopyMatches(s *Store, word string) int {
	s.search.mu.RLock()
	defer s.search.mu.RUnlock()
	if s.search.x == nil {
		return -1
	}
	return s.search.x.Matches(lexical.Document(word)[0])
}
