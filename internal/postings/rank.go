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
// term in n of N rows, and 10⁻⁶ where that is not positive.
func (x *Index) Rank(terms []string, f Filter, s *Scratch) []Hit {
	s.acc = s.acc[:0]
	if x.rows == 0 {
		return s.acc
	}
	k := x.at.keeper(f, s)
	if k.none {
		return s.acc
	}
	avgdl := float64(x.tokens) / float64(x.rows)
	for _, t := range terms {
		rows, ws := x.postingsOf(t, s)
		if len(rows) == 0 {
			continue
		}
		n := int64(len(rows))
		idf := math.Log((float64(x.rows-n) + float64(0.5)) / (float64(n) + float64(0.5)))
		if idf <= float64(0) {
			idf = float64(1e-06)
		}
		// Merge the term's postings into the scores so far, both by row.
		next, acc, i := s.next[:0], s.acc, 0
		for j, row := range rows {
			n := x.lens[row]
			if n == 0 {
				continue // removed with other terms than it was added with
			}
			if !k.keepsPart(&x.at, row) || k.narrow && !k.keepsNarrow(&x.at, row) {
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
			f := float64(ws[j]) * 0.5
			D := float64(n - 1)
			score = score + float64(idf*(float64(f*(k1+1))/(f+float64(k1*(1-b+float64(b*D)/avgdl)))))
			next = append(next, Hit{Row: row, Score: score})
		}
		next = append(next, acc[i:]...)
		s.acc, s.next = next, acc
	}
	return s.acc
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
