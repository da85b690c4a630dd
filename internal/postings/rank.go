package postings

import (
	"math"
	"slices"
)

// k1 and b are FTS5's BM25 parameters. They are variables, as in
// fts5_aux.c, so that every operation of the score below is the one
// FTS5's compiled code performs; each float64 conversion there rounds,
// as its counterpart does (no operation is fused).
var k1, b = 1.2, 0.75

// Scratch holds the buffers of a ranking, for the next one to reuse. The
// hits Rank returns live in it until then.
type Scratch struct {
	acc, next []Hit
	row       [1]uint32
	w         [1]uint16
	ns        []bool
}

// postings are the rows holding t and their weights.
func (x *Index) postingsOf(t string, s *Scratch) ([]uint32, []uint16) {
	v, ok := x.terms[t]
	switch {
	case !ok:
		return nil, nil
	case v&single != 0:
		s.row[0], s.w[0] = uint32(v>>16), uint16(v)
		return s.row[:], s.w[:]
	}
	l := &x.lists[v]
	return l.rows, l.w
}

// Rank scores every row f keeps that holds one of terms (distinct, in the
// order of the query), and returns them by row. A score is
// bm25(records_fts, 1.0, 0.5) negated: the sum, over the terms in order,
// of idf × f(k1+1) / (f + k1(1 − b + b·D/avgdl)), with f the term's
// occurrences in the body plus half those in the key, D the row's terms
// and avgdl the mean over the rows; idf is ln((N − n + ½)/(n + ½)) for a
// term in n of N rows, and 10⁻⁶ where that is not positive. N, avgdl and
// n are counted over the rows of f's partitions that have not expired at
// f.Now (Stats), never over any other.
func (x *Index) Rank(terms []string, f Filter, s *Scratch) []Hit {
	s.acc = s.acc[:0]
	if x.rows == 0 {
		return s.acc
	}
	k := x.at.keeper(f, s)
	if k.none {
		return s.acc
	}
	N, tokens := x.visible(&k)
	if N == 0 {
		return s.acc
	}
	avgdl := float64(tokens) / float64(N)
	for _, t := range terms {
		rows, ws := x.postingsOf(t, s)
		if len(rows) == 0 {
			continue
		}
		n := x.holding(rows, &k, -1)
		if n == 0 {
			continue
		}
		idf := IDF(N, n)
		// Merge the term's postings into the scores so far, both by row.
		next, acc, i := s.next[:0], s.acc, 0
		for j, row := range rows {
			n := x.lens[row]
			if n == 0 {
				continue // removed with other terms than it was added with
			}
			if !k.keepsPart(&x.at, row) || x.expired(row, k.f.Now) || k.narrow && !k.keepsNarrow(&x.at, row) {
				continue // a place not asked for
			}
			for i < len(acc) && acc[i].Row < row {
				next = append(next, acc[i])
				i++
			}
			var score float64
			if i < len(acc) && acc[i].Row == row {
				score = acc[i].Score
				i++
			}
			score = score + Term(idf, float64(ws[j])*0.5, float64(n-1), avgdl)
			next = append(next, Hit{Row: row, Score: score})
		}
		next = append(next, acc[i:]...)
		s.acc, s.next = next, acc
	}
	return s.acc
}

// IDF is BM25's inverse document frequency of a term n of N rows hold,
// as FTS5 computes it: ln((N − n + ½)/(n + ½)), 10⁻⁶ where that is not
// positive.
func IDF(N, n int64) float64 {
	idf := math.Log((float64(N-n) + float64(0.5)) / (float64(n) + float64(0.5)))
	if idf <= float64(0) {
		idf = float64(1e-06)
	}
	return idf
}

// Term is one term's part of a BM25 score, as FTS5 computes it: idf ×
// f(k1+1) / (f + k1(1 − b + b·D/avgdl)), for f occurrences (a key's
// counting half) in a row of D terms.
func Term(idf, f, D, avgdl float64) float64 {
	return float64(idf * (float64(f*(k1+1)) / (f + float64(k1*(1-b+float64(b*D)/avgdl)))))
}

// expired reports whether row expired at or before now (0: no time).
func (x *Index) expired(row uint32, now int64) bool {
	if now == 0 || len(x.expires) == 0 {
		return false
	}
	e, ok := x.expires[row]
	return ok && e <= now
}

// visible is the rows k's partitions hold that have not expired, and
// their terms: a ranking's N and N × avgdl.
func (x *Index) visible(k *keeper) (rows, tokens int64) {
	if k.allParts {
		rows, tokens = x.rows, x.tokens
	} else {
		for i := range k.nparts {
			for _, c := range x.byPart[k.partAt(i)] {
				rows += c.rows
				tokens += c.tokens
			}
		}
		if k.owner != 0 {
			for _, c := range x.byOwner[k.owner] {
				if !k.asks(c.part) && c.part != k.nowhere {
					rows += c.rows
					tokens += c.tokens
				}
			}
		}
	}
	if k.f.Now == 0 {
		return rows, tokens
	}
	for row, e := range x.expires {
		if e <= k.f.Now && k.keepsPart(&x.at, row) {
			rows--
			tokens -= int64(x.lens[row] - 1)
		}
	}
	return rows, tokens
}

// holding counts the rows of rows (a term's postings) that k's
// partitions hold and that have not expired, stopping at bound (< 0: no
// bound).
func (x *Index) holding(rows []uint32, k *keeper, bound int64) int64 {
	if k.allParts && (k.f.Now == 0 || len(x.expires) == 0) {
		return int64(len(rows))
	}
	var n int64
	for _, row := range rows {
		if x.lens[row] != 0 && k.keepsPart(&x.at, row) && !x.expired(row, k.f.Now) {
			if n++; n == bound {
				break
			}
		}
	}
	return n
}

// Stats are the statistics a ranking with f would score by: the rows of
// f's partitions that have not expired at f.Now (N), their terms, and
// how many of them hold each of terms, counting at most bound (< 0: no
// bound). The namespace, class and the other narrowing fields of f do
// not change them.
func (x *Index) Stats(terms []string, f Filter, bound int) (rows, tokens int64, holding []int64) {
	var s Scratch
	k := x.at.keeper(Filter{Parts: f.Parts, Owner: f.Owner, Now: f.Now}, &s)
	holding = make([]int64, len(terms))
	if k.none || x.rows == 0 {
		return 0, 0, holding
	}
	rows, tokens = x.visible(&k)
	for i, t := range terms {
		if ps, _ := x.postingsOf(t, &s); len(ps) > 0 {
			holding[i] = x.holding(ps, &k, int64(bound))
		}
	}
	return rows, tokens, holding
}

// better reports whether a ranks before b: the higher score, then the
// lower row (scores are never NaN).
func better(a, b Hit) bool { return a.Score > b.Score || a.Score == b.Score && a.Row < b.Row }

// before orders hits best first, for slices.SortFunc.
func before(a, b Hit) int {
	switch {
	case better(a, b):
		return -1
	case better(b, a):
		return 1
	}
	return 0
}

// Best moves the n best of hits (by score, then by row) to its front, in
// order, and returns them; the others stay in hits after them, in some
// order, for a later Best over hits[n:].
func Best(hits []Hit, n int) []Hit {
	if n >= len(hits) {
		slices.SortFunc(hits, before)
		return hits
	}
	if n <= 0 {
		return hits[:0]
	}
	// hits[:n] is a heap of the best n so far, the worst of them at its root.
	h := hits[:n]
	for i := n/2 - 1; i >= 0; i-- {
		down(h, i)
	}
	for i := n; i < len(hits); i++ {
		if better(hits[i], h[0]) {
			hits[i], h[0] = h[0], hits[i]
			down(h, 0)
		}
	}
	slices.SortFunc(h, before)
	return h
}

// down restores the heap property of h below i: no hit is worse than its
// parent.
func down(h []Hit, i int) {
	for {
		worst, l, r := i, 2*i+1, 2*i+2
		if l < len(h) && better(h[worst], h[l]) {
			worst = l
		}
		if r < len(h) && better(h[worst], h[r]) {
			worst = r
		}
		if worst == i {
			return
		}
		h[i], h[worst] = h[worst], h[i]
		i = worst
	}
}
