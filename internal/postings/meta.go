package postings

import (
	"hash/maphash"
	"log/slog"
	"slices"

	custody "github.com/custody-mem/custody"
)

// The metadata of the rows, for a ranking's metadata filter (custody
// Filters.Metadata: every pair asked for, key and value equal). Like a
// row's namespace, its metadata does not change while the row is in the
// index (an erasure clears it, and takes the row out). The index keeps,
// for each pair, the rows that have it. A pair is known by a 32-bit hash
// (a map entry of 12 to 20 bytes, where 64 bits took 24 to 38): a
// collision, which a pair asked for meets about once in 4,000 among a
// million others, only keeps the other pair's rows too, which the store's
// own condition then refuses; no row is ever left out.
//
// Remove is given a row's metadata with its terms and takes it out of its
// pairs; RemoveRows, given neither, reads every list.

// pairs holds the rows of each metadata pair.
type pairs struct {
	one  map[uint32]uint32   // a pair one row has
	many map[uint32][]uint32 // a pair more rows have, by row
	// unread are the rows whose metadata could not be read (none a store
	// writes): every metadata filter keeps them, the store decides.
	unread []uint32
	listed int64 // the capacity of many's lists, in rows
}

func newPairs() pairs { return pairs{one: map[uint32]uint32{}, many: map[uint32][]uint32{}} }

// pairSeed seeds the hashes of pairs. They live in memory only, so a
// seed of the process's own is enough.
var pairSeed = maphash.MakeSeed()

// pairHash is the hash of the pair key, value. Keys hold no zero byte
// (custody.ValidMetadata), so the two are told apart.
func pairHash(key, value string) uint32 {
	var h maphash.Hash
	h.SetSeed(pairSeed)
	h.WriteString(key)
	h.WriteByte(0)
	h.WriteString(value)
	sum := h.Sum64()
	return uint32(sum ^ sum>>32)
}

// set lists row under each pair of meta, the metadata as the stores keep
// it (custody.Metadata's JSON, "" for none).
func (p *pairs) set(row uint32, meta string) {
	if meta == "" {
		return
	}
	m, err := custody.ParseMetadata(meta)
	if err != nil {
		slog.Warn("search: a record's metadata could not be read; metadata filters leave it to the store", "row", row, "err", err)
		if i, found := slices.BinarySearch(p.unread, row); !found {
			p.unread = slices.Insert(p.unread, i, row)
		}
		return
	}
	for k, v := range m {
		p.add(row, pairHash(k, v))
	}
}

func (p *pairs) add(row uint32, h uint32) {
	if rows, ok := p.many[h]; ok {
		i := len(rows)
		if rows[i-1] >= row { // rows mostly come in order
			var found bool
			if i, found = slices.BinarySearch(rows, row); found {
				return
			}
		}
		before := cap(rows)
		rows = slices.Insert(rows, i, row)
		p.many[h] = rows
		p.listed += int64(cap(rows) - before)
		return
	}
	r, ok := p.one[h]
	switch {
	case !ok:
		p.one[h] = row
	case r != row:
		delete(p.one, h)
		p.many[h] = []uint32{min(r, row), max(r, row)}
		p.listed += 2
	}
}

// remove takes row out of the pairs of meta, as set was given it.
func (p *pairs) remove(row uint32, meta string) {
	if meta == "" {
		return
	}
	m, err := custody.ParseMetadata(meta)
	if err != nil {
		if i, found := slices.BinarySearch(p.unread, row); found {
			p.unread = slices.Delete(p.unread, i, i+1)
		}
		return
	}
	for k, v := range m {
		h := pairHash(k, v)
		if r, ok := p.one[h]; ok {
			if r == row {
				delete(p.one, h)
			}
			continue
		}
		rows := p.many[h]
		i, found := slices.BinarySearch(rows, row)
		if !found {
			continue
		}
		if rows = slices.Delete(rows, i, i+1); len(rows) == 1 {
			delete(p.many, h)
			p.listed -= int64(cap(rows))
			p.one[h] = rows[0]
		} else {
			p.many[h] = rows
		}
	}
}

// rows are the rows listed under the pair of hash h (buf holds a single
// one).
func (p *pairs) rows(h uint32, buf *[1]uint32) []uint32 {
	if r, ok := p.one[h]; ok {
		buf[0] = r
		return buf[:]
	}
	return p.many[h]
}

// drop takes the rows of out from every pair.
func (p *pairs) drop(out map[uint32]bool) {
	for h, r := range p.one {
		if out[r] {
			delete(p.one, h)
		}
	}
	for h, rows := range p.many {
		kept := slices.DeleteFunc(rows, func(r uint32) bool { return out[r] })
		switch len(kept) {
		case 0:
			delete(p.many, h)
			p.listed -= int64(cap(rows))
		case 1:
			delete(p.many, h)
			p.listed -= int64(cap(rows))
			p.one[h] = kept[0]
		default:
			p.many[h] = kept
		}
	}
	p.unread = slices.DeleteFunc(p.unread, func(r uint32) bool { return out[r] })
}

// of is the hashes of the pairs row is listed under, sorted (for Equal).
func (p *pairs) of() map[uint32][]uint32 {
	by := map[uint32][]uint32{}
	for h, r := range p.one {
		by[r] = append(by[r], h)
	}
	for h, rows := range p.many {
		for _, r := range rows {
			by[r] = append(by[r], h)
		}
	}
	for _, hs := range by {
		slices.Sort(hs)
	}
	return by
}

// Map entries of one and many, with their share of the map's control
// words and of the room it keeps to grow (one's measured at 12 to 20
// bytes over 100k to 3M entries).
const oneEntry, manyEntry = 16, 48

func (p *pairs) bytes() int64 {
	return int64(len(p.one))*oneEntry + int64(len(p.many))*manyEntry + p.listed*4 + int64(cap(p.unread))*4
}

// metaKeeper is the metadata part of a keeper: the rows of each pair a
// filter asks for, shortest first.
type metaKeeper struct {
	lists  [][]uint32
	bufs   [][1]uint32
	unread []uint32
}

// keeper readies m's pairs; none reports that no row has one of them.
func (p *pairs) keeper(m custody.Metadata) (k metaKeeper, none bool) {
	if len(m) == 0 {
		return k, false
	}
	k.lists, k.bufs, k.unread = make([][]uint32, 0, len(m)), make([][1]uint32, len(m)), p.unread
	for key, v := range m {
		rows := p.rows(pairHash(key, v), &k.bufs[len(k.lists)])
		if len(rows) == 0 && len(p.unread) == 0 {
			return k, true
		}
		k.lists = append(k.lists, rows)
	}
	slices.SortFunc(k.lists, func(a, b []uint32) int { return len(a) - len(b) })
	return k, false
}

// keeps reports whether row has every pair asked for (or its metadata
// was not read).
func (k *metaKeeper) keeps(row uint32) bool {
	for _, rows := range k.lists {
		if _, found := slices.BinarySearch(rows, row); !found {
			_, unread := slices.BinarySearch(k.unread, row)
			return unread
		}
	}
	return true
}
