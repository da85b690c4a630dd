package postings

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkRankBest ranks a two-word query of a 1,000-word vocabulary
// over 100,000 rows of 12 words (each word in about 1.2% of the rows, as
// storetest.Common) and takes the best 16: the copy's share of a search.
func BenchmarkRankBest(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := New()
	word := func() string { return fmt.Sprintf("w%d", rng.IntN(1000)) }
	for row := range uint32(100000) {
		body := make([]string, 12)
		for i := range body {
			body[i] = word()
		}
		x.Add(row, Place{}, body, nil)
	}
	b.ReportMetric(float64(x.Bytes())/1e6, "index-MB")
	var s Scratch
	b.ResetTimer()
	for i := range b.N {
		hits := x.Rank([]string{fmt.Sprintf("w%d", i%1000), fmt.Sprintf("w%d", (i*7+3)%1000)}, Filter{}, &s)
		if len(Best(hits, 16)) != 16 {
			b.Fatal("fewer than 16 hits")
		}
	}
}

// BenchmarkRemoveRows takes one row out of 100,000 and 1,000,000 rows of
// 12 words without its terms (an erasure the PostgreSQL store sees after
// the fact), then puts it back for the next round.
func BenchmarkRemoveRows(b *testing.B) {
	for _, n := range []int{100000, 1000000} {
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			x := New()
			bodies := make([][]string, n)
			for row := range uint32(n) {
				body := make([]string, 12)
				for i := range body {
					body[i] = fmt.Sprintf("w%d", rng.IntN(1000))
				}
				body[0] = fmt.Sprintf("id-%d", row) // a term of its own, as most records have
				bodies[row] = body
				x.Add(row, Place{}, body, nil)
			}
			b.ResetTimer()
			for i := range b.N {
				row := uint32(i % n)
				x.RemoveRows([]uint32{row})
				if x.Has(row) {
					b.Fatal("row still in the index")
				}
				x.Add(row, Place{}, bodies[row], nil)
			}
		})
	}
}

// BenchmarkRankBroad ranks, as one user of four would, a query of a word
// every row holds and a word of about 1.2% of them, over 1,000,000 rows
// of the four users' partitions, and takes the best 400 (a semantic
// list's candidates): each ranking reads the million postings of the
// common word.
func BenchmarkRankBroad(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := New()
	users := []string{"acme/alice", "acme/bob", "acme/carol", "acme/dave"}
	for row := range uint32(1000000) {
		body := []string{"note"}
		for range 11 {
			body = append(body, fmt.Sprintf("w%d", rng.IntN(1000)))
		}
		u := users[row%4]
		x.Add(row, Place{Part: u, Owner: u, Namespace: "notes", Class: "fact"}, body, nil)
	}
	var s Scratch
	f := Filter{Parts: []string{"acme/alice"}, Owner: "acme/alice"}
	b.ResetTimer()
	for i := range b.N {
		hits := x.Rank([]string{"note", fmt.Sprintf("w%d", i%1000)}, f, &s)
		if len(Best(hits, 400)) != 400 {
			b.Fatal("fewer than 400 hits")
		}
	}
}
