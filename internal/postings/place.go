package postings

import (
	"encoding/binary"
	"slices"
	"strings"
	"time"

	custody "github.com/custody-mem/custody"
)

// Where a row is, for the filters of a ranking: its partition, namespace,
// class, creation time, key and metadata. Only the partition changes once
// a row is in the index (Move); the others are a record's for good, so
// that a ranking may leave out the rows a query's filters would refuse
// before anyone reads them.

// Place is where a row is.
type Place struct {
	// Part is the row's partition: "" for a row no ranking may keep but
	// one over every partition (Filter.Parts nil), and which no other
	// ranking's statistics count.
	Part string
	// Owner, if set, is the row's owner: a ranking for that owner
	// (Filter.Owner) keeps the row in any partition but "".
	Owner            string
	Namespace, Class string
	Created          int64 // Unix nanoseconds
	// Expires is when the row stops being eligible (Unix nanoseconds; 0:
	// never): from then on it counts in no ranking's statistics, and no
	// ranking keeps it.
	Expires int64
	Key     string // of which the index keeps the first eight bytes
	// Meta is the record's metadata as the stores keep it (custody
	// Metadata's JSON, "" for none); the index keeps its pairs (meta.go).
	Meta string
}

// Filter is what rows a ranking keeps: those of the partitions Parts
// (every partition if nil) and those of the owner Owner (if set) in any
// partition but "", of the namespace Namespace and the class
// Class if they are set, at or under the namespace Under if it is set,
// by whole segments (work holds work and work/notes, not workshop), and
// created after After and before Before where they are not 0 (Unix
// nanoseconds). KeyPrefix, if set, keeps the rows whose key begins with
// its first eight bytes: a row kept may differ in the rest (the store's
// own condition decides), a row left out never begins with KeyPrefix.
// Meta, if set, keeps the rows whose metadata has each of its pairs (and,
// on a collision of their hashes, a few more: the store decides). Now,
// if set, leaves out the rows that expired at or before it (Unix
// nanoseconds), from the ranking and from its statistics alike.
type Filter struct {
	Parts                   []string
	Owner                   string
	Now                     int64
	Namespace, Under, Class string
	After, Before           int64
	KeyPrefix               string
	Meta                    custody.Metadata
}

// head is the first eight bytes of s, big-endian, zero-padded: s begins
// with p's first n ≤ 8 bytes if and only if head(s) and head(p) agree in
// their first n bytes (keys and prefixes hold no zero byte).
func head(s string) uint64 {
	var h uint64
	for i := range 8 {
		h <<= 8
		if i < len(s) {
			h |= uint64(s[i])
		}
	}
	return h
}

// dict numbers names from 1 in the order they come; 0 is no name.
type dict struct {
	ids   map[string]uint32
	names []string // by number
	text  int64
}

func newDict() dict { return dict{ids: map[string]uint32{}, names: []string{""}} }

// id is name's number, given it now (added) if it had none.
func (d *dict) id(name string) (id uint32, added bool) {
	if id, ok := d.ids[name]; ok {
		return id, false
	}
	name = strings.Clone(name)
	id = uint32(len(d.names))
	d.ids[name] = id
	d.names = append(d.names, name)
	d.text += int64(len(name))
	return id, true
}

// bytes estimates d's memory: its map entries (mapEntry each) and names.
func (d *dict) bytes() int64 { return int64(len(d.ids))*mapEntry + int64(cap(d.names))*16 + d.text }

// places holds each row's place, by row, its names numbered.
type places struct {
	part, ns, class []uint32
	owner           []uint32 // 0: none
	created         []int64
	key             []uint64 // head of the key
	parts, nss      dict
	owners          dict
	classes         dict
	meta            pairs
	// byName holds the namespaces' numbers in the order of their names
	// (the namespaces under a prefix are a run of it), but for the recent
	// ones, in the order they came: a store may have a namespace a
	// session, and inserting each into byName in its place would cost the
	// namespaces before it, every time.
	byName, recent []uint32
}

// recentNames is how many namespaces wait in recent, at most, before
// they are merged into byName: a prefix reads each of them.
func (p *places) recentNames() int { return 1024 + len(p.byName)/64 }

func newPlaces() places {
	return places{parts: newDict(), nss: newDict(), owners: newDict(), classes: newDict(), meta: newPairs()}
}

// set gives row its place, growing the arrays to hold it.
func (p *places) set(row uint32, at Place) {
	if n := int(row) + 1; n > len(p.part) {
		grow := n - len(p.part)
		p.part = append(p.part, make([]uint32, grow)...)
		p.owner = append(p.owner, make([]uint32, grow)...)
		p.ns = append(p.ns, make([]uint32, grow)...)
		p.class = append(p.class, make([]uint32, grow)...)
		p.created = append(p.created, make([]int64, grow)...)
		p.key = append(p.key, make([]uint64, grow)...)
	}
	p.key[row] = head(at.Key)
	p.part[row], _ = p.parts.id(at.Part)
	p.owner[row] = 0
	if at.Owner != "" {
		p.owner[row], _ = p.owners.id(at.Owner)
	}
	p.class[row], _ = p.classes.id(at.Class)
	p.created[row] = at.Created
	p.meta.set(row, at.Meta)
	id, added := p.nss.id(at.Namespace)
	if added {
		if p.recent = append(p.recent, id); len(p.recent) > p.recentNames() {
			p.mergeNames()
		}
	}
	p.ns[row] = id
}

// mergeNames moves the recent namespaces into byName, in their order.
func (p *places) mergeNames() {
	slices.SortFunc(p.recent, func(a, b uint32) int { return strings.Compare(p.nss.names[a], p.nss.names[b]) })
	merged := make([]uint32, 0, len(p.byName)+len(p.recent))
	i, j := 0, 0
	for i < len(p.byName) && j < len(p.recent) {
		if p.nss.names[p.byName[i]] < p.nss.names[p.recent[j]] {
			merged, i = append(merged, p.byName[i]), i+1
		} else {
			merged, j = append(merged, p.recent[j]), j+1
		}
	}
	merged = append(append(merged, p.byName[i:]...), p.recent[j:]...)
	p.byName, p.recent = merged, p.recent[:0]
}

func (p *places) cmpName(id uint32, name string) int { return strings.Compare(p.nss.names[id], name) }

// move puts row in partition part.
func (p *places) move(row uint32, part string) { p.part[row], _ = p.parts.id(part) }

// of is row's place, its key cut to the eight bytes the index keeps,
// without its metadata (pairs.of has it).
func (p *places) of(row uint32) Place {
	return Place{Part: p.parts.names[p.part[row]], Owner: p.owners.names[p.owner[row]], Namespace: p.nss.names[p.ns[row]], Class: p.classes.names[p.class[row]], Created: p.created[row],
		Key: strings.TrimRight(string(binary.BigEndian.AppendUint64(nil, p.key[row])), "\x00")}
}

func (p *places) bytes() int64 {
	return p.parts.bytes() + p.nss.bytes() + p.owners.bytes() + p.classes.bytes() + p.meta.bytes() +
		int64(cap(p.part)+cap(p.owner)+cap(p.ns)+cap(p.class)+cap(p.byName)+cap(p.recent))*4 + int64(cap(p.created)+cap(p.key))*8
}

// keeper is a Filter made ready to test the rows of one ranking.
type keeper struct {
	f        Filter
	allParts bool
	part     [2]uint32 // at most two partitions are asked for (a caller's own, its tenant's shared),
	more     []uint32  // more in a slice
	nparts   int       // the partitions in part, then more (distinct, each holding rows once)
	owner    uint32    // the owner whose rows are kept in any partition but nowhere; 0: none
	nowhere  uint32    // the number of partition "" (0 if no row was ever there)
	ns       []bool    // by namespace number, the namespaces kept; nil: all
	class    uint32    // the class kept, 0 for every one
	key      uint64    // the head of the key prefix, in its first keyBytes
	keyMask  uint64    // keyBytes bytes of ones, 0 for every key
	meta     metaKeeper
	narrow   bool // a namespace, class, span, key prefix or metadata is asked for
	none     bool // nothing can be kept (a namespace or class the index does not hold)
}

// keeper readies f for p's rows, with s's buffer for its namespaces. A
// namespace costs nothing to ready, a prefix the namespaces under it and
// the recent ones.
func (p *places) keeper(f Filter, s *Scratch) keeper {
	k := keeper{f: f, allParts: f.Parts == nil,
		narrow: f.Namespace != "" || f.Under != "" || f.Class != "" || f.After != 0 || f.Before != 0 || f.KeyPrefix != "" || len(f.Meta) > 0}
	k.meta, k.none = p.meta.keeper(f.Meta)
	if f.KeyPrefix != "" {
		k.keyMask = ^uint64(0) << (8 * (8 - min(8, len(f.KeyPrefix))))
		k.key = head(f.KeyPrefix) & k.keyMask
	}
	if f.Owner != "" {
		k.owner = p.owners.ids[f.Owner]
	}
	k.nowhere = p.parts.ids[""]
	for _, name := range f.Parts {
		id := p.parts.ids[name]
		if id == 0 || k.part[0] == id || k.part[1] == id || slices.Contains(k.more, id) {
			continue // no row there, or named twice
		}
		if k.nparts < len(k.part) {
			k.part[k.nparts] = id
		} else {
			k.more = append(k.more, id)
		}
		k.nparts++
	}
	if f.Class != "" {
		k.class = p.classes.ids[f.Class]
		k.none = k.none || k.class == 0
	}
	if f.Namespace == "" && f.Under == "" {
		return k
	}
	k.ns = slices.Grow(s.ns[:0], len(p.nss.names))[:len(p.nss.names)]
	clear(k.ns)
	s.ns = k.ns
	found, below := false, f.Under+"/"
	keep := func(id uint32) {
		if name := p.nss.names[id]; f.Under == "" || name == f.Under || strings.HasPrefix(name, below) {
			k.ns[id] = f.Namespace == "" || name == f.Namespace
			found = found || k.ns[id]
		}
	}
	if f.Namespace != "" {
		if id, ok := p.nss.ids[f.Namespace]; ok {
			keep(id)
		}
	} else {
		if i, ok := slices.BinarySearchFunc(p.byName, f.Under, p.cmpName); ok {
			keep(p.byName[i])
		}
		i, _ := slices.BinarySearchFunc(p.byName, below, p.cmpName)
		for ; i < len(p.byName) && strings.HasPrefix(p.nss.names[p.byName[i]], below); i++ {
			keep(p.byName[i])
		}
		for _, id := range p.recent {
			keep(id)
		}
	}
	k.none = k.none || !found
	return k
}

// asks reports whether part is one of the partitions k asks for.
func (k *keeper) asks(part uint32) bool {
	return k.allParts || part == k.part[0] || part == k.part[1] || slices.Contains(k.more, part)
}

// partAt is the i-th distinct partition k asks for (i < k.nparts).
func (k *keeper) partAt(i int) uint32 {
	if i < len(k.part) {
		return k.part[i]
	}
	return k.more[i-len(k.part)]
}

// keepsPart reports whether row, of places p, is of a partition k asks
// for.
func (k *keeper) keepsPart(p *places, row uint32) bool {
	part := p.part[row]
	return k.allParts || part == k.part[0] || part == k.part[1] || len(k.more) > 0 && slices.Contains(k.more, part) ||
		k.owner != 0 && p.owner[row] == k.owner && part != k.nowhere
}

// keepsNarrow reports whether row, of places p, is of the namespace, class,
// span, key prefix and metadata k asks for (if k.narrow).
func (k *keeper) keepsNarrow(p *places, row uint32) bool {
	switch {
	case k.ns != nil && !k.ns[p.ns[row]]:
		return false
	case k.class != 0 && p.class[row] != k.class:
		return false
	case k.f.After != 0 && p.created[row] <= k.f.After:
		return false
	case k.f.Before != 0 && p.created[row] >= k.f.Before:
		return false
	case k.keyMask != 0 && p.key[row]&k.keyMask != k.key:
		return false
	case k.meta.lists != nil && !k.meta.keeps(row):
		return false
	}
	return true
}

// spanSlack widens span on each side: the store's own condition decides
// the edges, whatever precision it keeps times in (PostgreSQL's are
// microseconds), so the ranking only has to keep every row it could pass.
const spanSlack = int64(time.Millisecond)

// QueryFilter is what a ranking keeps for a search of the partitions
// parts and of owner's rows under q: q's namespace, class, span of creation times, key prefix
// and metadata. The store applies each of them again, with the
// eligibility, in the query that reads the ranking's best; ranking without
// the rows they refuse (none of them changes once a record is written)
// spares a search of a namespace of a few records from checking every
// other namespace's matches first.
//
// now is the caller's time: a row expired then is left out, from the
// ranking and from its statistics.
func QueryFilter(parts []string, owner string, now time.Time, q custody.SearchQuery) Filter {
	f := Filter{Parts: parts, Owner: owner, Now: unixNano(now), Namespace: q.Namespace, Under: q.NamespacePrefix, Class: string(q.Class), KeyPrefix: q.Filters.KeyPrefix,
		Meta: q.Filters.Metadata}
	f.After, f.Before = span(q.Filters.CreatedAfter, q.Filters.CreatedBefore)
	return f
}

// unixNano is t in Unix nanoseconds, 0 for the zero time.
func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// span is a Filter's After and Before for records created after after and
// before before (either nil for no bound), a millisecond wider on each
// side.
func span(after, before *time.Time) (int64, int64) {
	var a, b int64
	if after != nil {
		a = after.UnixNano() - spanSlack
	}
	if before != nil {
		b = before.UnixNano() + spanSlack
	}
	return a, b
}
