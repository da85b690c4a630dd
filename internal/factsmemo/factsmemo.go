// Package factsmemo notes which records are no episode, for the stores'
// neighbour walks.
//
// A hybrid search asks its store for the neighbours of the episodes of
// its lexical list, and most memories are no episode: facts, keys,
// results. Finding that out in SQL costs an index probe and a row read
// an id, or a round trip. But the list was made by reading the very rows
// of its records, and a record's class never changes, so that read notes
// which of them are no episode, and the neighbour walk asks only about
// the others.
package factsmemo

import (
	"strings"
	"sync"
)

// Max bounds the ids a Memo holds (about 80 bytes each); it forgets them
// all when full, and learns them again from the next reads.
const Max = 1 << 16

// Memo holds ids of records known to be no episode. The zero Memo is
// empty and ready.
type Memo struct {
	mu  sync.Mutex
	ids map[string]struct{}
}

// Note adds ids, read with their class, of records that are no episode.
// An id new to the memo is copied: a caller's ids may view memory the
// memo must not keep (a store's kept texts, which an erasure drops).
func (m *Memo) Note(ids []string) {
	if len(ids) == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ids == nil || len(m.ids)+len(ids) > Max {
		m.ids = make(map[string]struct{}, len(ids))
	}
	for _, id := range ids {
		if _, ok := m.ids[id]; !ok {
			m.ids[strings.Clone(id)] = struct{}{}
		}
	}
}

// Unknown is ids without those known to be no episode, in their order.
func (m *Memo) Unknown(ids []string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.ids) == 0 {
		return ids
	}
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if _, fact := m.ids[id]; !fact {
			out = append(out, id)
		}
	}
	return out
}

// Forget empties the memo.
func (m *Memo) Forget() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ids = nil
}
