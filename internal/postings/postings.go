// Package postings is an inverted index held in memory: for each term, the
// rows that hold it in their body or key and how often, and for each row
// its length in terms. Ranking a query reads only the postings of its
// terms, and its BM25 scores are, to the bit, those of FTS5's
// bm25(records_fts, 1.0, 0.5) over the same terms: the same statistics
// (rows, total terms, rows holding a term), the same weights (a term in
// the key counts half), and the same floating-point expression in the
// same order.
//
// Each row is in one partition, a string its owner chooses (the SQLite
// store: the record's owner, for a record only its owner may read, or its
// tenant, for one shared), and a ranking may keep only the rows of the
// partitions it names: a caller then pays for the matches it may see,
// not for every user's. A row may also expire (its Place's Expires). A
// row also has a namespace, a class, a creation time, the head of its
// key and its metadata pairs (its Place), and a ranking may keep only
// the rows of a namespace, of those under a prefix, of a class, of a span
// of time, of a key prefix or with given metadata (a Filter): a search
// narrowed to a few records then looks at their matches alone.
//
// The statistics of a ranking's scores (the rows, their mean length, the
// rows holding each term) are those of the rows of the partitions it
// names that have not expired at its time (Filter.Now), whatever else it
// narrows to: the records its caller may retrieve, and nothing else.
// Nothing a caller may not see changes its scores (design rule 4): a
// store puts a record no caller may retrieve (quarantined, retired, an
// older version) in a partition no caller names. Over every partition
// (Filter.Parts nil) and no expiry, they are the whole index's, and the
// scores those of FTS5 over the same rows.
//
// An Index is not safe for concurrent use: its owner serialises changes
// against rankings (the SQLite store holds it under a read-write lock).
package postings

import (
	"maps"
	"math"
	"slices"
	"strings"
)

// Hit is a row that holds at least one term of a query, and its score.
type Hit struct {
	Row   uint32
	Score float64
}

// single marks a term's entry in Index.terms that is its only posting
// (row in bits 16–47, weight in bits 0–15) rather than the index of its
// list: most terms of a store (numbers, names, identifiers) are in one
// row, and a list of one would cost three times the entry itself.
const single = 1 << 63

// Index is the inverted index. Its zero value is not usable; see New.
type Index struct {
	terms map[string]uint64
	lists []list
	free  []uint32 // lists emptied by Remove, for reuse
	// lens holds, by row, 1 + the row's number of terms (body and key),
	// or 0 for a row not in the index.
	lens   []uint32
	at     places // by row
	rows   int64
	tokens int64
	// cells holds the rows and terms of each partition and owner
	// (cellKey), byPart and byOwner the cells of each, by number.
	cells           map[uint64]*partStats
	byPart, byOwner map[uint32][]*cell
	// expires holds the rows that expire, and when (Unix nanoseconds).
	expires map[uint32]int64
	// postings counts every posting, single or in a list; text the
	// bytes of the terms; listBytes the capacity of the lists' arrays.
	postings, text, listBytes int64
}

// partStats are rows and their terms.
type partStats struct{ rows, tokens int64 }

// cell is the rows of one partition and one owner.
type cell struct {
	part, owner uint32
	*partStats
}

// cellKey is the key of the cell of part and owner in Index.cells.
func cellKey(part, owner uint32) uint64 { return uint64(part)<<32 | uint64(owner) }

// list is the postings of a term held by more than one row, by row.
type list struct {
	rows []uint32
	w    []uint16 // weight: 2 × occurrences in the body + occurrences in the key
}

// New returns an empty index.
func New() *Index {
	return &Index{terms: map[string]uint64{}, at: newPlaces(), expires: map[uint32]int64{},
		cells: map[uint64]*partStats{}, byPart: map[uint32][]*cell{}, byOwner: map[uint32][]*cell{}}
}

// Rows is the number of rows in the index.
func (x *Index) Rows() int64 { return x.rows }

// Has reports whether row is in the index.
func (x *Index) Has(row uint32) bool { return int(row) < len(x.lens) && x.lens[row] != 0 }

// Bytes estimates the memory the index holds: its terms' map entries and
// text, its lists and their arrays, and its rows' lengths and places.
// (On the benchmark corpus, built from the records of a store: 20 MiB
// estimated where the heap grew by 17 MiB at 100k records; about 193
// against 195 MiB at 1M.)
func (x *Index) Bytes() int64 {
	return int64(len(x.terms))*mapEntry + x.text + int64(cap(x.lists))*48 + x.listBytes + int64(cap(x.lens))*4 + x.at.bytes() +
		int64(len(x.cells))*cellBytes + int64(len(x.expires))*expiryEntry
}

// expiryEntry is what an entry of Index.expires costs, and cellBytes a
// cell, with their share of the maps' control words and room to grow.
const expiryEntry, cellBytes = 24, 96

// count adds d rows of n terms each to the statistics of row's cell.
func (x *Index) count(row uint32, d, n int64) {
	part, owner := x.at.part[row], x.at.owner[row]
	st := x.cells[cellKey(part, owner)]
	if st == nil {
		st = &partStats{}
		x.cells[cellKey(part, owner)] = st
		c := &cell{part: part, owner: owner, partStats: st}
		x.byPart[part] = append(x.byPart[part], c)
		if owner != 0 {
			x.byOwner[owner] = append(x.byOwner[owner], c)
		}
	}
	st.rows += d
	st.tokens += d * n
}

// mapEntry is what a map entry of a string costs: its slot (string header
// and value), its share of the control words and of the room the map
// keeps to grow, and the string's own allocation beyond its text.
const mapEntry = 56

// Matches is how many rows hold term.
func (x *Index) Matches(term string) int {
	v, ok := x.terms[term]
	switch {
	case !ok:
		return 0
	case v&single != 0:
		return 1
	default:
		return len(x.lists[v].rows)
	}
}

// Weights counts each distinct term of a row: 2 for each time it is in
// body, 1 for each time in key (a score counts half of it).
func Weights(body, key []string) map[string]uint16 { return weights(body, key) }

// weights counts each distinct term of a row: 2 for each time it is in
// body, 1 for each time in key.
func weights(body, key []string) map[string]uint16 {
	w := make(map[string]uint16, len(body)+len(key))
	for _, t := range body {
		w[t] = sat(w[t], 2)
	}
	for _, t := range key {
		w[t] = sat(w[t], 1)
	}
	return w
}

// sat adds d to w, saturating: a weight past 65,535 (a term 32,768 times
// in one body) stays there. FTS5 would go on counting; no record is that
// large (custody.MaxBodyBytes).
func sat(w, d uint16) uint16 {
	if w > math.MaxUint16-d {
		return math.MaxUint16
	}
	return w + d
}

// Add indexes row, at place at, with the terms of its body and key (in
// any order, with repeats, as internal/lexical.Document gives them). A
// row already in the index is left as it is: remove it first to change
// its terms.
func (x *Index) Add(row uint32, at Place, body, key []string) {
	if x.Has(row) {
		return
	}
	if n := int(row) + 1; n > len(x.lens) {
		x.lens = append(x.lens, make([]uint32, n-len(x.lens))...)
	}
	x.lens[row] = uint32(1 + len(body) + len(key))
	x.at.set(row, at)
	x.rows++
	x.tokens += int64(len(body) + len(key))
	x.count(row, 1, int64(len(body)+len(key)))
	if at.Expires != 0 {
		x.expires[row] = at.Expires
	}
	for t, w := range weights(body, key) {
		x.addPosting(t, row, w)
	}
}

// Move puts row, if it is in the index, in partition part.
func (x *Index) Move(row uint32, part string) {
	if x.Has(row) {
		n := int64(x.lens[row] - 1)
		x.count(row, -1, n)
		x.at.move(row, part)
		x.count(row, 1, n)
	}
}

func (x *Index) addPosting(t string, row uint32, w uint16) {
	x.postings++
	v, ok := x.terms[t]
	if !ok {
		// A copy: a term is often a piece of its record's text, which
		// would otherwise stay in memory with it.
		x.terms[strings.Clone(t)] = single | uint64(row)<<16 | uint64(w)
		x.text += int64(len(t))
		return
	}
	if v&single != 0 {
		r0, w0 := uint32(v>>16), uint16(v)
		l := list{rows: []uint32{r0}, w: []uint16{w0}}
		id := x.newList(l)
		x.terms[strings.Clone(t)] = uint64(id) // assigning replaces the key too
		v = uint64(id)
		x.listBytes += l.bytes()
	}
	l := &x.lists[v]
	i := len(l.rows)
	if i > 0 && l.rows[i-1] > row { // rows mostly come in order
		i = search(l.rows, row)
	}
	before := l.bytes()
	l.rows = insert(l.rows, i, row)
	l.w = insert(l.w, i, w)
	x.listBytes += l.bytes() - before
}

// bytes is the capacity of l's arrays.
func (l *list) bytes() int64 { return int64(cap(l.rows))*4 + int64(cap(l.w))*2 }

func (x *Index) newList(l list) uint32 {
	if n := len(x.free); n > 0 {
		id := x.free[n-1]
		x.free = x.free[:n-1]
		x.lists[id] = l
		return id
	}
	x.lists = append(x.lists, l)
	return uint32(len(x.lists) - 1)
}

// Remove takes row out of the index, given the terms and the metadata
// (Place.Meta) it was added with.
func (x *Index) Remove(row uint32, body, key []string, meta string) {
	if !x.Has(row) {
		return
	}
	x.at.meta.remove(row, meta)
	x.forget(row)
	for t := range weights(body, key) {
		x.removePosting(t, row)
	}
}

// forget takes row out of the counts of the index and of its partition.
func (x *Index) forget(row uint32) {
	n := int64(x.lens[row] - 1)
	x.rows--
	x.tokens -= n
	x.count(row, -1, n)
	delete(x.expires, row)
	x.lens[row] = 0
}

func (x *Index) removePosting(t string, row uint32) {
	v, ok := x.terms[t]
	switch {
	case !ok:
		return
	case v&single != 0:
		if uint32(v>>16) == row {
			delete(x.terms, t)
			x.postings--
			x.text -= int64(len(t))
		}
		return
	}
	l := &x.lists[v]
	i := search(l.rows, row)
	if i == len(l.rows) || l.rows[i] != row {
		return
	}
	x.postings--
	l.rows = append(l.rows[:i], l.rows[i+1:]...)
	l.w = append(l.w[:i], l.w[i+1:]...)
	if len(l.rows) == 1 {
		x.terms[strings.Clone(t)] = single | uint64(l.rows[0])<<16 | uint64(l.w[0])
		x.listBytes -= l.bytes()
		x.lists[v] = list{}
		x.free = append(x.free, uint32(v))
	}
}

// RemoveRows takes rows out of the index without the terms they were
// added with, for when their text is gone (an erasure seen after the
// fact): it reads every term's postings, so it costs the whole index
// (BenchmarkRemoveRows) where Remove costs the row's terms. A term held by
// no row any more leaves the index, its text with it.
func (x *Index) RemoveRows(rows []uint32) {
	out := map[uint32]bool{}
	for _, row := range rows {
		if x.Has(row) && !out[row] {
			out[row] = true
			x.forget(row)
		}
	}
	if len(out) == 0 {
		return
	}
	x.at.meta.drop(out)
	for t, v := range x.terms {
		if v&single != 0 {
			if out[uint32(v>>16)] {
				delete(x.terms, t)
				x.postings--
				x.text -= int64(len(t))
			}
			continue
		}
		x.dropFromList(t, uint32(v), out)
	}
}

// dropFromList takes the rows of out from term t's list, id, turning it
// into a single posting, or taking t out, when one row or none is left.
func (x *Index) dropFromList(t string, id uint32, out map[uint32]bool) {
	l := &x.lists[id]
	before := l.bytes()
	if len(out) <= 8 { // an erasure or a few: look each up, the list stays as it is
		for row := range out {
			if i := search(l.rows, row); i < len(l.rows) && l.rows[i] == row {
				l.rows = append(l.rows[:i], l.rows[i+1:]...)
				l.w = append(l.w[:i], l.w[i+1:]...)
				x.postings--
			}
		}
	} else {
		kept := 0
		for i, row := range l.rows {
			if !out[row] {
				l.rows[kept], l.w[kept] = row, l.w[i]
				kept++
			}
		}
		x.postings -= int64(len(l.rows) - kept)
		l.rows, l.w = l.rows[:kept], l.w[:kept]
	}
	kept := len(l.rows)
	if kept > 1 {
		return
	}
	x.listBytes -= before
	if kept == 1 {
		x.terms[t] = single | uint64(l.rows[0])<<16 | uint64(l.w[0])
	} else {
		delete(x.terms, t)
		x.text -= int64(len(t))
	}
	x.lists[id] = list{}
	x.free = append(x.free, id)
}

// search is the first position in rows (ascending) not below row.
func search(rows []uint32, row uint32) int {
	lo, hi := 0, len(rows)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if rows[m] < row {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

func insert[T any](s []T, i int, v T) []T {
	var zero T
	s = append(s, zero)
	copy(s[i+1:], s[i:])
	s[i] = v
	return s
}

// Equal reports whether x and y hold the same rows with the same terms,
// places and metadata: a copy kept up to date against one built afresh.
func (x *Index) Equal(y *Index) bool {
	if x.rows != y.rows || x.tokens != y.tokens || x.postings != y.postings || len(x.terms) != len(y.terms) || len(x.expires) != len(y.expires) {
		return false
	}
	for row, e := range x.expires {
		if y.expires[row] != e {
			return false
		}
	}
	if !maps.Equal(x.statsByName(), y.statsByName()) {
		return false
	}
	for i := range max(len(x.lens), len(y.lens)) {
		if x.length(uint32(i)) != y.length(uint32(i)) || x.placeOf(uint32(i)) != y.placeOf(uint32(i)) {
			return false
		}
	}
	// The same metadata pairs, and none left under a row taken out.
	xm, ym := x.at.meta.of(), y.at.meta.of()
	if len(xm) != len(ym) || !slices.Equal(x.at.meta.unread, y.at.meta.unread) {
		return false
	}
	for row, hs := range xm {
		if !slices.Equal(hs, ym[row]) {
			return false
		}
	}
	var sx, sy Scratch
	for t := range x.terms {
		xr, xw := x.postingsOf(t, &sx)
		yr, yw := y.postingsOf(t, &sy)
		if !slices.Equal(xr, yr) || !slices.Equal(xw, yw) {
			return false
		}
	}
	return true
}

// statsByName is the statistics of each partition and owner holding
// rows, by their names.
func (x *Index) statsByName() map[[2]string]partStats {
	out := map[[2]string]partStats{}
	for _, cs := range x.byPart {
		for _, c := range cs {
			if *c.partStats != (partStats{}) {
				out[[2]string{x.at.parts.names[c.part], x.at.owners.names[c.owner]}] = *c.partStats
			}
		}
	}
	return out
}

// length is lens[row], 0 past its end.
func (x *Index) length(row uint32) uint32 {
	if int(row) < len(x.lens) {
		return x.lens[row]
	}
	return 0
}

// placeOf is row's place (the zero Place for a row not in the index).
func (x *Index) placeOf(row uint32) Place {
	if !x.Has(row) {
		return Place{}
	}
	return x.at.of(row)
}
