package sqlite

import (
	"sync"

	"github.com/custody-mem/custody/embed"
	"github.com/custody-mem/custody/internal/postings"
)

// The texts the copy's rankings read.
//
// Each list of a hybrid search reads its best records' rows once the copy
// has ranked them (bestEligible): their ids, and the semantic list's 400
// candidates' keys and bodies, which it scores word by word. At 100k
// records those reads were 85% of a hybrid search's CPU, a page read a
// row, since every commit of the writer empties each reader's page cache.
// So the store keeps, beside the copy, the id, key, body and class of the
// records those reads found (searchTexts, bounded in bytes), and a
// ranking whose best records are kept reads none of them.
//
// A record kept is then eligible as the copy has it: the copy ranks only
// the records of the caller's partitions, whose owner, audience, state,
// head and expiry it keeps exactly (search_index.go), so for a query
// without the filters it keeps loosely (creation time, metadata and key
// prefix, which it keeps widened or hashed: postings.Filter) and without
// a condition of its own, the copy's answer is the store's condition's
// (searchFilter), as of the commit the copy holds. Such queries alone use
// the texts (copyDecides), and only rankings whose records are read again
// with the store's condition before any is returned do (the hybrid and
// semantic lists: custody's readRanked); Search, which returns the rows
// it checks, checks each in SQL as before.
//
// A text kept is the record's as written: a record's id, key and class
// never change, and its body only when it is erased, which takes the
// record out of the texts as the writer gives its commit to the copy
// (searchIndex.apply, whatever state the copy is in), before a search
// that read the erasure's position ranks (rankHeld waits for it). A read begun before a removal is not kept (epoch), so a row
// read from an older snapshot cannot come back after it. When the copy is
// dropped (another process's commit, which this store never sees as
// changes) the texts are emptied with it.
type searchTexts struct {
	mu    sync.RWMutex
	epoch uint64 // counts removals: a read begun before one is not kept
	m     map[uint32]keptText
	bytes int
	limit int
}

// keptText is one record's id, key, body and class as the texts keep
// it, and the form a scorer derived from them (embed.Form; nil until
// one does), which is the text's as much as the text is.
type keptText struct {
	id, key, body string
	episode       bool
	form          embed.Form
}

// searchTextsBytes bounds the texts kept (about 120k conversation turns
// with their forms), or a quarter of the copy's own bound if that is
// less (serve --search-memory). Past it a quarter of them, chosen at
// random, are dropped.
const searchTextsBytes = 64 << 20

func searchTextsLimit(copyLimit int64) int { return int(max(0, min(searchTextsBytes, copyLimit/4))) }

// keptOverhead is what a kept text costs beyond its strings' bytes: its
// map slot and string headers.
const keptOverhead = 80

func (k keptText) size() int {
	n := len(k.id) + len(k.key) + len(k.body) + keptOverhead
	if k.form != nil {
		n += k.form.Bytes()
	}
	return n
}

// take sets got[i] to best[i]'s record if it is kept (got is as long as
// best, and zero where it is not) and returns the others, in order.
func (t *searchTexts) take(best []postings.Hit, got []eligibleHit) []postings.Hit {
	var missing []postings.Hit
	t.mu.RLock()
	defer t.mu.RUnlock()
	for i, h := range best {
		k, ok := t.m[h.Row]
		if !ok {
			missing = append(missing, h)
			continue
		}
		got[i] = eligibleHit{rid: int64(h.Row), id: k.id, key: k.key, body: k.body, episode: k.episode, form: k.form}
	}
	return missing
}

// begin is the epoch a read of rows begins at, for keep.
func (t *searchTexts) begin() uint64 {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.epoch
}

// keep keeps the texts of rows read since begin gave epoch, unless a
// removal came between.
func (t *searchTexts) keep(epoch uint64, rows map[int64]eligibleHit) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.epoch != epoch || t.limit <= 0 {
		return
	}
	if t.m == nil {
		t.m = make(map[uint32]keptText)
	}
	for _, e := range rows {
		if _, ok := t.m[uint32(e.rid)]; ok {
			continue // kept already, with its form if it has one
		}
		k := keptText{id: e.id, key: e.key, body: e.body, episode: e.episode}
		t.m[uint32(e.rid)] = k
		t.bytes += k.size()
	}
	t.trimLocked()
}

// trimLocked drops texts at random, from a random start in the map,
// while they pass the bound, to three quarters of it.
func (t *searchTexts) trimLocked() {
	if t.bytes <= t.limit {
		return
	}
	for rid, k := range t.m {
		delete(t.m, rid)
		if t.bytes -= k.size(); t.bytes <= t.limit*3/4 {
			return
		}
	}
}

// formed is a form a scorer derived from a record's text as a ranking
// gave it (eligibleHit), for setForms.
type formed struct {
	hit  eligibleHit
	form embed.Form
}

// setForms keeps each form as the form of its record's text, if the text
// kept is still the one it was derived from (id, key and body), all
// under one hold of the lock: searches side by side take the texts
// between.
func (t *searchTexts) setForms(fs []formed) {
	if len(fs) == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, f := range fs {
		k, ok := t.m[uint32(f.hit.rid)]
		if !ok || k.form != nil || k.id != f.hit.id || k.key != f.hit.key || k.body != f.hit.body {
			continue
		}
		t.bytes -= k.size()
		k.form = f.form
		t.m[uint32(f.hit.rid)] = k
		t.bytes += k.size()
	}
	t.trimLocked()
}

// forget drops the texts of the records a commit of this store's writer
// took out of the index (ops: an erasure's removal), and every text if it
// rebuilt the index.
func (t *searchTexts) forget(ops []indexOp) {
	for _, op := range ops {
		switch {
		case op.reset:
			t.empty()
		case op.remove:
			t.remove(uint32(op.rid))
		}
	}
}

// remove drops a record's text (its erasure).
func (t *searchTexts) remove(rid uint32) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.epoch++
	if k, ok := t.m[rid]; ok {
		delete(t.m, rid)
		t.bytes -= k.size()
	}
}

// empty drops every text.
func (t *searchTexts) empty() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.epoch++
	t.m, t.bytes = nil, 0
}

// SearchTextsStats reports on the texts kept beside the copy
// (search_texts.go): the records and bytes kept, and how many records
// rankings took from them and read from their rows instead since the
// store opened. They are the custody_sqlite_search_texts_* metrics.
func (s *Store) SearchTextsStats() (records, bytes, kept, read int64) {
	n, b := s.search.texts.held()
	return int64(n), int64(b), s.search.textsKept.Load(), s.search.textsRead.Load()
}

// held reports how many records and bytes the texts keep.
func (t *searchTexts) held() (records, bytes int) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.m), t.bytes
}
