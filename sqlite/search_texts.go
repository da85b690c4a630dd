package sqlite

import (
	"iter"
	"slices"
	"sync"
	"unsafe"

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
// that read the erasure's position ranks (rankHeld waits for it). A read
// begun before a removal is not kept (epoch), so a row read from an
// older snapshot cannot come back after it. When the copy is
// dropped (another process's commit, which this store never sees as
// changes) the texts are emptied with it.
//
// The texts are kept in chunks of bytes with no pointer in them (ids,
// keys, bodies and forms side by side), indexed by a map of plain
// offsets: at 100k records the texts are a few hundred thousand strings
// and forms, which the collector would otherwise walk on every cycle
// (a quarter of a search's CPU, measured). Rankings are given strings
// and forms that view the chunks; a chunk's bytes are never changed once
// written, and a dropped chunk is left to the collector as a string no
// longer kept is. Once a scorer derived a record's form (embed.Form), the
// form is kept in place of its key and body, which it stands for; a
// chunk left less than half in use by such replacements is written again
// into the newest. Past the bound the oldest chunks are dropped; an
// erasure drops every chunk the record's bytes were written in, after
// writing the other texts they held into the newest.
type searchTexts struct {
	mu     sync.RWMutex
	epoch  uint64 // counts removals: a read begun before one is not kept
	m      map[uint32]textRef
	chunks []textChunk // oldest first; chunks[i] is chunk number base+i
	base   uint32
	bytes  int // the chunks' capacity and the map's entries
	limit  int
}

// textChunk is bytes of texts and forms, written up to len(b) and never
// changed below it, and the records whose text or form was written in it
// (some since written again elsewhere, or replaced: their bytes stay
// until the chunk is dropped). A dropped chunk has b nil.
type textChunk struct {
	b    []byte
	rids []uint32
	live int // the bytes of the entries the map has in it
}

// textRef is where a kept record is, in chunk from off: its id, then
// either its form (hasForm: a scorer derived one, and it stands for the
// text) or its key and body.
type textRef struct {
	chunk, off             uint32
	idLen, keyLen, bodyLen uint32
	formLen                uint32
	episode, hasForm       bool
}

// size is the bytes the entry takes in its chunk.
func (r textRef) size() uint32 { return r.idLen + r.keyLen + r.bodyLen + r.formLen }

// searchTextsBytes bounds the texts kept (about 120k conversation turns
// with their forms), or a quarter of the copy's own bound if that is
// less (serve --search-memory). Past it the oldest chunks are dropped, to
// three quarters of it.
const searchTextsBytes = 64 << 20

func searchTextsLimit(copyLimit int64) int { return int(max(0, min(searchTextsBytes, copyLimit/4))) }

// keptOverhead is what a kept text costs beyond its bytes: its map slot
// and its place in a chunk's records.
const keptOverhead = 56

// chunkSize is a chunk's capacity: a sixteenth of the bound, between 256
// bytes and 256 KiB (a text longer than that has a chunk of its own).
func (t *searchTexts) chunkSize() int { return min(256<<10, max(256, t.limit/16)) }

// view is n bytes of chunk c from off, as a string.
func (t *searchTexts) view(c, off, n uint32) string {
	if n == 0 {
		return ""
	}
	return unsafe.String(&t.chunks[c-t.base].b[off], n)
}

// hit is the kept record rid as a ranking reads it.
func (t *searchTexts) hit(rid uint32, r textRef) eligibleHit {
	e := eligibleHit{rid: int64(rid), id: t.view(r.chunk, r.off, r.idLen), episode: r.episode}
	at := r.off + r.idLen
	if r.hasForm {
		b := t.chunks[r.chunk-t.base].b
		e.form, e.partial = embed.Form(b[at:at+r.formLen:at+r.formLen]), true
	} else {
		e.key, e.body = t.view(r.chunk, at, r.keyLen), t.view(r.chunk, at+r.keyLen, r.bodyLen)
	}
	return e
}

// entry writes e's id, and its form, or else its key and body, and
// returns where.
func (t *searchTexts) entry(rid uint32, e eligibleHit) textRef {
	r := textRef{idLen: uint32(len(e.id)), episode: e.episode}
	if e.form != nil {
		r.formLen, r.hasForm = uint32(len(e.form)), true
		r.chunk, r.off = t.write(rid, e.id, unsafe.String(unsafe.SliceData(e.form), len(e.form)))
		return r
	}
	r.keyLen, r.bodyLen = uint32(len(e.key)), uint32(len(e.body))
	r.chunk, r.off = t.write(rid, e.id, e.key, e.body)
	return r
}

// write writes parts one after another into the newest chunk (a new one
// if they do not fit) for record rid, and returns the chunk and offset.
func (t *searchTexts) write(rid uint32, parts ...string) (c, off uint32) {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	last := len(t.chunks) - 1
	if last < 0 || t.chunks[last].b == nil || len(t.chunks[last].b)+n > cap(t.chunks[last].b) {
		size := max(t.chunkSize(), n)
		t.chunks = append(t.chunks, textChunk{b: make([]byte, 0, size)})
		t.bytes += size
		last++
	}
	ch := &t.chunks[last]
	off = uint32(len(ch.b))
	for _, p := range parts {
		ch.b = append(ch.b, p...)
	}
	ch.rids = append(ch.rids, rid)
	return t.base + uint32(last), off
}

// take sets got[i] to best[i]'s record if it is kept (got is as long as
// best, and zero where it is not), with its form or text, and returns
// the others, in order.
func (t *searchTexts) take(best []postings.Hit, got []eligibleHit) []postings.Hit {
	var missing []postings.Hit
	t.mu.RLock()
	defer t.mu.RUnlock()
	for i, h := range best {
		r, ok := t.m[h.Row]
		if !ok {
			missing = append(missing, h)
			continue
		}
		got[i] = t.hit(h.Row, r)
	}
	return missing
}

// begin is the epoch a read of rows begins at, for keep.
func (t *searchTexts) begin() uint64 {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.epoch
}

// keep keeps what hits hold of the records read from their rows (read,
// at their epoch): the form a scorer derived, or else the key and body,
// for a ranking that will score them (a form then replaces the text). A
// hit not read, or read before a removal, is not kept; with none read,
// the lock is not taken (a ranking whose records were all kept).
func (t *searchTexts) keep(hits iter.Seq[eligibleHit]) {
	read := false
	for e := range hits {
		if read = e.read; read {
			break
		}
	}
	if !read {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for e := range hits {
		t.keepLocked(e)
	}
	t.trimLocked()
}

// keepLocked keeps e (its form, or else its text) unless it was read
// before a removal or the texts keep as much of it already.
func (t *searchTexts) keepLocked(e eligibleHit) {
	if !e.read || e.epoch != t.epoch || t.limit <= 0 {
		return
	}
	if t.m == nil {
		t.m = make(map[uint32]textRef)
	}
	rid := uint32(e.rid)
	r, ok := t.m[rid]
	if ok && (r.hasForm || e.form == nil) {
		return
	}
	if !ok {
		t.bytes += keptOverhead
	}
	t.set(rid, t.entry(rid, e))
	if ok {
		t.unset(r)
		t.compact(r.chunk)
	}
}

// set makes r rid's entry.
func (t *searchTexts) set(rid uint32, r textRef) {
	t.m[rid] = r
	t.chunks[r.chunk-t.base].live += int(r.size())
}

// unset counts an entry no longer the map's out of its chunk.
func (t *searchTexts) unset(r textRef) {
	t.chunks[r.chunk-t.base].live -= int(r.size())
}

// compact drops chunk c, its entries written again into the newest, once
// less than half of it is entries the map has (a record's text replaced
// by its form leaves its bytes there); never the newest.
func (t *searchTexts) compact(c uint32) {
	ch := t.chunks[c-t.base]
	if ch.b != nil && c != t.base+uint32(len(t.chunks))-1 && 2*ch.live < len(ch.b) {
		t.dropLocked(c, true)
	}
}

// trimLocked drops the oldest chunks while the texts pass the bound, to
// three quarters of it.
func (t *searchTexts) trimLocked() {
	if t.bytes <= t.limit {
		return
	}
	for len(t.chunks) > 0 && t.bytes > t.limit*3/4 {
		t.dropLocked(t.base, false)
		t.chunks, t.base = t.chunks[1:], t.base+1
	}
	if len(t.chunks) == 0 {
		t.chunks = nil // the array's memory goes too
	}
}

// dropLocked drops chunk c and the records kept in it; with keepOthers,
// those records are written into the newest chunk first (a chunk dropped
// for an erasure in it, or compacted).
func (t *searchTexts) dropLocked(c uint32, keepOthers bool) {
	ch := &t.chunks[c-t.base]
	if ch.b == nil {
		return
	}
	if keepOthers && c == t.base+uint32(len(t.chunks))-1 {
		t.chunks = append(t.chunks, textChunk{}) // write the others elsewhere
		ch = &t.chunks[c-t.base]
	}
	for _, rid := range ch.rids {
		r, ok := t.m[rid]
		if !ok || r.chunk != c {
			continue
		}
		if !keepOthers {
			delete(t.m, rid)
			t.bytes -= keptOverhead
			continue
		}
		r.chunk, r.off = t.write(rid, t.view(c, r.off, r.size()))
		t.set(rid, r)
	}
	ch = &t.chunks[c-t.base]
	t.bytes -= cap(ch.b)
	*ch = textChunk{}
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

// remove drops a record's text (its erasure), and with it every chunk
// its bytes were ever written in: where it is kept, and where a text its
// form replaced, or an entry dropped for the bound beside one still
// kept, left them. Their other records are written again into the
// newest chunk, and the erased bytes are left to the collector.
func (t *searchTexts) remove(rid uint32) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.epoch++
	if r, ok := t.m[rid]; ok {
		delete(t.m, rid)
		t.unset(r)
		t.bytes -= keptOverhead
	}
	for i := range len(t.chunks) { // not the chunks written meanwhile
		if slices.Contains(t.chunks[i].rids, rid) {
			t.dropLocked(t.base+uint32(i), true)
		}
	}
	t.trimLocked()
}

// empty drops every text.
func (t *searchTexts) empty() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.epoch++
	t.m, t.chunks, t.bytes = nil, nil, 0
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
