package postings

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	custody "github.com/custody-mem/custody"
	"pgregory.net/rapid"
)

// model is the index as the plainest code holds it: each row's terms and
// partition.
type model struct {
	body, key map[uint32][]string
	at        map[uint32]Place
}

// keeps reports whether f keeps a row at p.
func keeps(f Filter, p Place) bool {
	return visibleTo(f, p) &&
		(f.Namespace == "" || p.Namespace == f.Namespace) &&
		(f.Under == "" || p.Namespace == f.Under || strings.HasPrefix(p.Namespace, f.Under+"/")) &&
		(f.Class == "" || p.Class == f.Class) &&
		(f.After == 0 || p.Created > f.After) && (f.Before == 0 || p.Created < f.Before) &&
		(f.KeyPrefix == "" || p.Key != "" && strings.HasPrefix(p.Key, f.KeyPrefix[:min(8, len(f.KeyPrefix))])) &&
		keepsMeta(f.Meta, p.Meta)
}

// visibleTo reports whether a row at p counts in the statistics of a
// ranking with f: of its partitions, not expired at its time.
func visibleTo(f Filter, p Place) bool {
	return (f.Parts == nil || slices.Contains(f.Parts, p.Part) || f.Owner != "" && p.Owner == f.Owner && p.Part != "") &&
		(f.Now == 0 || p.Expires == 0 || p.Expires > f.Now)
}

// keepsMeta reports whether metadata meta (as JSON) has every pair of
// want; metadata that cannot be read is left to the store, so kept.
func keepsMeta(want custody.Metadata, meta string) bool {
	if len(want) == 0 {
		return true
	}
	m, err := custody.ParseMetadata(meta)
	if err != nil {
		return true
	}
	for k, v := range want {
		if got, ok := m[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// metas are the metadata rows of the tests have: none, pairs in common,
// a value of its own, and one that cannot be read.
var metas = []string{"", `{"project":"apollo"}`, `{"lang":"en","project":"apollo"}`, `{"lang":"de","project":"gemini"}`,
	`{"source":"msg-1"}`, `{"lang":"de"}`, `{"a":"bc"}`, `{"project":`}

// rank is Rank computed from the model row by row, term by term, as
// fts5_aux.c's bm25 computes it for a row: every term of the query in
// order, a term the row lacks adding nothing; the statistics are those of
// the rows f's partitions hold that have not expired at f.Now.
func (m model) rank(terms []string, f Filter) []Hit {
	var n, tokens int64
	for r := range m.body {
		if !visibleTo(f, m.at[r]) {
			continue
		}
		n++
		tokens += int64(len(m.body[r]) + len(m.key[r]))
	}
	if n == 0 {
		return nil
	}
	avgdl := float64(tokens) / float64(n)
	idf := make([]float64, len(terms))
	for i, t := range terms {
		var hits int64
		for r := range m.body {
			if visibleTo(f, m.at[r]) && (slices.Contains(m.body[r], t) || slices.Contains(m.key[r], t)) {
				hits++
			}
		}
		idf[i] = math.Log((float64(n-hits) + 0.5) / (float64(hits) + 0.5))
		if idf[i] <= 0 {
			idf[i] = 1e-6
		}
	}
	var out []Hit
	for r := range m.body {
		if !keeps(f, m.at[r]) {
			continue
		}
		var score float64
		matched := false
		for i, t := range terms {
			f := 0.0
			for _, w := range m.body[r] {
				if w == t {
					f += 1
				}
			}
			for _, w := range m.key[r] {
				if w == t {
					f += 0.5
				}
			}
			if f == 0 {
				continue
			}
			matched = true
			D := float64(len(m.body[r]) + len(m.key[r]))
			score = score + float64(idf[i]*(float64(f*(k1+1))/(f+float64(k1*(1-b+float64(b*D)/avgdl)))))
		}
		if matched {
			out = append(out, Hit{Row: r, Score: score})
		}
	}
	slices.SortFunc(out, func(a, b Hit) int { return cmp.Compare(a.Row, b.Row) })
	return out
}

var vocabulary = []string{"ledger", "plumber", "invoice", "acct-7777", "meeting", "budget", "garden", "x"}

func terms(t *rapid.T, label string) []string {
	return rapid.SliceOfN(rapid.SampledFrom(vocabulary), 0, 12).Draw(t, label)
}

// Adding and removing rows in any order (rows out of order, a row added
// twice, removed twice, with its terms or without them, lists growing past
// one posting and shrinking back to one or none) leaves an index that
// ranks every query exactly as the model does, and equal to one built
// from the rows that remain, holding the text of their terms alone.
func TestIndexAgreesWithModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		x := New()
		m := model{body: map[uint32][]string{}, key: map[uint32][]string{}, at: map[uint32]Place{}}
		partition := rapid.SampledFrom([]string{"alice", "bob", "shared", "group", ""})
		place := rapid.Custom(func(t *rapid.T) Place {
			return Place{
				Part:      partition.Draw(t, "partition"),
				Owner:     rapid.SampledFrom([]string{"", "alice", "bob"}).Draw(t, "owner"),
				Namespace: rapid.SampledFrom([]string{"", "work", "work/notes", "work/notes/2026", "workshop", "home"}).Draw(t, "namespace"),
				Class:     rapid.SampledFrom([]string{"fact", "episode"}).Draw(t, "class"),
				Created:   rapid.Int64Range(1, 5).Draw(t, "created"),
				Key:       rapid.SampledFrom([]string{"", "payee", "payee.iban", "payee.ibax", "payee.ixyz", "payee.name", "prefs.tone", "p"}).Draw(t, "key"),
				Meta:      rapid.SampledFrom(metas).Draw(t, "metadata"),
				Expires:   rapid.SampledFrom([]int64{0, 0, 0, 2, 4}).Draw(t, "expires"),
			}
		})
		for range rapid.IntRange(1, 60).Draw(t, "ops") {
			row := rapid.Uint32Range(0, 40).Draw(t, "row")
			if _, in := m.body[row]; in {
				switch rapid.IntRange(0, 3).Draw(t, "change") {
				case 3: // its text gone: with others, in the index or not, past the few looked up one by one
					rows := append(rapid.SliceOfN(rapid.Uint32Range(0, 40), 0, 40).Draw(t, "with"), row)
					x.RemoveRows(rows)
					for _, r := range rows {
						delete(m.body, r)
						delete(m.key, r)
						delete(m.at, r)
					}
					continue
				case 0:
					x.Remove(row, m.body[row], m.key[row], m.at[row].Meta)
					delete(m.body, row)
					delete(m.key, row)
					delete(m.at, row)
					continue
				case 1:
					p := partition.Draw(t, "moved to")
					x.Move(row, p)
					at := m.at[row]
					at.Part = p
					m.at[row] = at
					continue
				}
			}
			body, key, at := terms(t, "body"), terms(t, "key"), place.Draw(t, "place")
			x.Add(row, at, body, key) // a row already in stays as it is
			if _, in := m.body[row]; !in {
				m.body[row], m.key[row], m.at[row] = body, key, at
			}
		}
		var s Scratch
		for _, q := range [][]string{vocabulary, {"ledger"}, {"x", "plumber"}, {"absent"}, {"budget", "acct-7777", "ledger"}} {
			for _, vis := range []Filter{{}, {Parts: []string{"alice", "shared"}}, {Parts: []string{"bob"}}, {Parts: []string{"nobody"}},
				{Parts: []string{"alice", "bob", "shared"}}, {Parts: []string{"alice", "shared"}, Owner: "alice"}, {Parts: []string{"group"}, Owner: "bob"},
				{Parts: []string{"shared", "group", "group"}, Owner: "nobody"}} {
				parts := vis.Parts
				for _, f := range []Filter{{}, {Namespace: "work"}, {Namespace: "work/notes"}, {Namespace: "absent"}, {Under: "work"},
					{Under: "work/notes"}, {Under: "wor"}, {Under: "work", Namespace: "work/notes"}, {Under: "home", Namespace: "work"},
					{Class: "episode"}, {Class: "absent"}, {After: 2}, {Before: 4}, {After: 1, Before: 3, Class: "fact", Under: "work"},
					{KeyPrefix: "payee."}, {KeyPrefix: "payee.iban"}, {KeyPrefix: "p"}, {KeyPrefix: "zzz"}, {KeyPrefix: "payee", Class: "fact"},
					{Meta: custody.Metadata{"project": "apollo"}}, {Meta: custody.Metadata{"project": "apollo", "lang": "en"}},
					{Meta: custody.Metadata{"lang": "de"}, Class: "fact"}, {Meta: custody.Metadata{"project": "mercury"}},
					{Meta: custody.Metadata{"source": "msg-1"}}, {Meta: custody.Metadata{"project": "apollo"}, Namespace: "work"},
					{Meta: custody.Metadata{"ab": "c"}}, {Now: 1}, {Now: 2}, {Now: 3, Class: "fact"}, {Now: 5}} {
					f.Parts, f.Owner = parts, vis.Owner
					got := slices.Clone(x.Rank(q, f, &s))
					want := m.rank(q, f)
					if !slices.Equal(got, want) {
						t.Fatalf("Rank(%v, %+v) = %v, want %v", q, f, got, want)
					}
				}
			}
		}
		fresh := New()
		for r, body := range m.body {
			fresh.Add(r, m.at[r], body, m.key[r])
		}
		if !x.Equal(fresh) || !fresh.Equal(x) {
			t.Fatal("the index differs from one built afresh from the same rows")
		}
		if !samePairs(x.at.meta, fresh.at.meta) {
			t.Fatal("the index lists other rows under metadata pairs than one built afresh")
		}
		if x.text != fresh.text {
			t.Fatalf("the index counts %d bytes of terms' text, one built afresh %d", x.text, fresh.text)
		}
		for _, term := range vocabulary {
			n := 0
			for r := range m.body {
				if slices.Contains(m.body[r], term) || slices.Contains(m.key[r], term) {
					n++
				}
			}
			if got := x.Matches(term); got != n {
				t.Fatalf("Matches(%q) = %d, want %d", term, got, n)
			}
		}
		for _, f := range []Filter{{}, {Parts: []string{"alice", "shared"}, Now: 3}, {Parts: []string{"bob", "bob"}}, {Parts: []string{"nobody"}, Now: 1},
			{Parts: []string{"shared", "group"}, Owner: "alice", Now: 2}, {Parts: []string{"alice"}, Owner: "alice"}, {Owner: "bob", Parts: []string{}}} {
			rows, tokens, holding := x.Stats(vocabulary, f, -1)
			var wantRows, wantTokens int64
			for r := range m.body {
				if visibleTo(f, m.at[r]) {
					wantRows++
					wantTokens += int64(len(m.body[r]) + len(m.key[r]))
				}
			}
			if rows != wantRows || tokens != wantTokens {
				t.Fatalf("Stats(%+v) = %d rows, %d terms; want %d, %d", f, rows, tokens, wantRows, wantTokens)
			}
			for i, term := range vocabulary {
				var n int64
				for r := range m.body {
					if visibleTo(f, m.at[r]) && (slices.Contains(m.body[r], term) || slices.Contains(m.key[r], term)) {
						n++
					}
				}
				if holding[i] != n {
					t.Fatalf("Stats(%+v): %q in %d rows, want %d", f, term, holding[i], n)
				}
			}
		}
	})
}

// Taking rows out without their terms leaves the index that taking them
// out with their terms leaves, whether a few rows go (each looked up in
// every list) or many (every list filtered).
func TestRemoveRowsIsRemove(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		with, without := New(), New()
		n := rapid.IntRange(0, 80).Draw(t, "rows")
		body, key, meta := make([][]string, n), make([][]string, n), make([]string, n)
		for r := range n {
			body[r], key[r], meta[r] = terms(t, "body"), terms(t, "key"), rapid.SampledFrom(metas).Draw(t, "metadata")
			with.Add(uint32(r), Place{Meta: meta[r]}, body[r], key[r])
			without.Add(uint32(r), Place{Meta: meta[r]}, body[r], key[r])
		}
		gone := rapid.SliceOfN(rapid.IntRange(0, 90), 0, 90).Draw(t, "gone")
		var rows []uint32
		for _, r := range gone {
			rows = append(rows, uint32(r))
			if r < n {
				with.Remove(uint32(r), body[r], key[r], meta[r])
			}
		}
		without.RemoveRows(rows)
		if !without.Equal(with) || without.text != with.text || !samePairs(without.at.meta, with.at.meta) {
			t.Fatalf("RemoveRows(%v) differs from Remove of each", rows)
		}
	})
}

// Best gives the same head as a full sort, and taking the best a few at a
// time gives the whole ranking.
func TestBestIsTheHeadOfTheSort(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var hits []Hit
		for i, s := range rapid.SliceOf(rapid.IntRange(0, 5)).Draw(t, "scores") {
			hits = append(hits, Hit{Row: uint32(i), Score: float64(s)}) // ties on purpose
		}
		want := slices.Clone(hits)
		slices.SortFunc(want, before)
		var got []Hit
		rest := hits
		for len(rest) > 0 {
			n := rapid.IntRange(1, 4).Draw(t, "n")
			best := Best(rest, n)
			got = append(got, best...)
			rest = rest[len(best):]
		}
		if !slices.Equal(got, want) {
			t.Fatalf("best a few at a time = %v, want %v", got, want)
		}
	})
}

// A term is kept as a copy: the text it was cut from (a record's whole
// body) is not held in memory with it, however the term's entry changes
// (a map assignment replaces its key with the one assigned).
func TestTermsAreCopies(t *testing.T) {
	body := strings.Repeat("ledger ", 1000)
	start := uintptr(unsafe.Pointer(unsafe.StringData(body)))
	x := New()
	held := func(step string) {
		t.Helper()
		for term := range x.terms {
			if p := uintptr(unsafe.Pointer(unsafe.StringData(term))); p >= start && p < start+uintptr(len(body)) {
				t.Fatalf("%s: term %q is kept in its record's text", step, term)
			}
		}
	}
	x.Add(1, Place{}, []string{body[:6]}, nil)
	held("a new term")
	x.Add(2, Place{}, []string{body[7:13]}, nil)
	held("its second row")
	x.Add(3, Place{}, []string{body[14:20]}, nil)
	x.Remove(3, []string{body[21:27]}, nil, "")
	x.Remove(2, []string{body[28:34]}, nil, "")
	held("back to one row")
	if x.Matches("ledger") != 1 {
		t.Fatalf("ledger in %d rows, want 1", x.Matches("ledger"))
	}
}

// span keeps every row created strictly inside the span, however close to
// its edges, and leaves out rows well outside it.
func TestSpanKeepsTheEdges(t *testing.T) {
	after := time.Date(2026, 12, 1, 10, 0, 0, 123456789, time.UTC)
	before := after.Add(time.Hour)
	x := New()
	created := []time.Time{after.Add(-2 * time.Millisecond), after.Add(time.Nanosecond), before.Add(-time.Nanosecond), before.Add(2 * time.Millisecond)}
	for i, c := range created {
		x.Add(uint32(i), Place{Created: c.UnixNano()}, []string{"ledger"}, nil)
	}
	f := Filter{}
	f.After, f.Before = span(&after, &before)
	var got []uint32
	for _, h := range x.Rank([]string{"ledger"}, f, new(Scratch)) {
		got = append(got, h.Row)
	}
	if !slices.Equal(got, []uint32{1, 2}) {
		t.Fatalf("rows kept in the span: %v, want [1 2] (the two just inside it)", got)
	}
	f.After, f.Before = span(nil, nil)
	if f.After != 0 || f.Before != 0 || len(x.Rank([]string{"ledger"}, f, new(Scratch))) != 4 {
		t.Fatalf("no span: After %d, Before %d; want every row", f.After, f.Before)
	}
}

// A prefix finds the namespaces under it however many there are and in
// whatever order they came, before and after the recent ones are merged
// into name order.
func TestPrefixOverManyNamespaces(t *testing.T) {
	x := New()
	var s Scratch
	under := func(prefix string) int { return len(x.Rank([]string{"ledger"}, Filter{Under: prefix}, &s)) }
	want := map[string]int{}
	for i := range 5000 {
		ns := fmt.Sprintf("%s/%d", []string{"n", "m", "n/deep", "nn"}[(i*7)%4], (i*7919)%5000)
		x.Add(uint32(i), Place{Namespace: ns}, []string{"ledger"}, nil)
		for _, p := range []string{"n", "m", "n/deep", "nn"} {
			if strings.HasPrefix(ns, p+"/") {
				want[p]++
			}
		}
		if i == 500 || i == 4999 {
			for _, p := range []string{"n", "m", "n/deep", "nn"} {
				if got := under(p); got != want[p] {
					t.Fatalf("after %d rows (%d namespaces waiting to be merged): %d rows under %s, want %d", i+1, len(x.at.recent), got, p, want[p])
				}
			}
		}
	}
	if len(x.at.byName) == 0 {
		t.Fatal("5,000 namespaces and none merged into name order")
	}
}

// samePairs reports whether a and b list the same rows under the same
// pairs, none left behind by a row taken out.
func samePairs(a, b pairs) bool {
	if len(a.one) != len(b.one) || len(a.many) != len(b.many) || !slices.Equal(a.unread, b.unread) {
		return false
	}
	for h, r := range a.one {
		if r2, ok := b.one[h]; !ok || r2 != r {
			return false
		}
	}
	for h, rows := range a.many {
		if !slices.Equal(rows, b.many[h]) {
			return false
		}
	}
	return true
}
