package sqlite

import "sync"

// A hybrid search asks for the neighbours of the episodes of its lexical
// list (Neighbours), and most memories are no episode: facts, keys,
// results. Finding that out in SQL read two pages an id, an index's and
// the row's (a fifth of a hybrid search over facts). But the list was
// made by reading the very rows of its records (readEligible), and a
// record's class never changes, so that read notes which of them are no
// episode, and Neighbours asks SQL only about the others.

// maxFacts bounds the ids a factsMemo holds (about 80 bytes each); it
// forgets them all when full, and learns them again from the next reads.
const maxFacts = 1 << 16

// factsMemo holds ids of records known to be no episode.
type factsMemo struct {
	mu  sync.Mutex
	ids map[string]struct{}
}

// note adds ids, read with their class, of records that are no episode.
func (m *factsMemo) note(ids []string) {
	if len(ids) == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ids == nil || len(m.ids)+len(ids) > maxFacts {
		m.ids = make(map[string]struct{}, len(ids))
	}
	for _, id := range ids {
		m.ids[id] = struct{}{}
	}
}

// unknown is ids without those known to be no episode, in their order.
func (m *factsMemo) unknown(ids []string) []string {
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
