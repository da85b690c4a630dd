package sqlite

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
)

// VectorCandidates finds the same candidates with the copy as with FTS5:
// the best by BM25 of the eligible records with a vector of the model,
// when more match than it takes, and all of them when fewer do.
func TestVectorCandidatesCopyAgrees(t *testing.T) {
	s := openTestStore(t, filepath.Join(t.TempDir(), "c.db"), Options{})
	rng := rand.New(rand.NewPCG(3, 4))
	words := []string{"plumber", "invoice", "ledger", "garden", "budget", "meeting"}
	var rs []*custody.Record
	var vs []custody.RecordVector
	for i := range 300 {
		r := testRecord(fmt.Sprintf("%s %s note %d", words[rng.IntN(6)], words[rng.IntN(6)], i), "")
		if i%5 == 0 {
			r.Owner = "bob" // not alice's to see
		}
		rs = append(rs, r)
		if i%3 != 0 { // a third have no vector yet
			v := make([]float32, 8)
			for j := range v {
				v[j] = rng.Float32()*2 - 1
			}
			vs = append(vs, custody.RecordVector{ID: r.ID, Tenant: r.Tenant, Vec: v})
		}
	}
	putRecords(t, s, rs...)
	if err := s.PutVectors(t.Context(), "m", vs); err != nil {
		t.Fatal(err)
	}
	sc := custody.Scope{Tenant: "acme", Subject: "alice", Now: time.Now().Add(time.Minute)}
	query := [][]float32{{1, 0, 0, 0, 0, 0, 0, 0}, {0, 1, 0, 0, 0, 0, 0, 0}}
	run := func(candidates int) []custody.Ranked {
		got, err := s.VectorCandidates(t.Context(), sc, custody.SearchQuery{Limit: 50}, "m", query, []string{"plumber", "ledger"}, candidates)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	for _, candidates := range []int{20, 1000} {
		s.search.mu.Lock()
		s.search.limit = DefaultSearchMemory
		s.search.mu.Unlock()
		before := s.search.byCopy.Load()
		withCopy := run(candidates)
		if s.search.byCopy.Load() != before+1 {
			t.Fatal("the candidates were not found with the copy")
		}
		s.search.mu.Lock()
		s.search.limit = 0
		s.search.mu.Unlock()
		withFTS := run(candidates)
		if len(withCopy) == 0 || !slices.Equal(withCopy, withFTS) {
			t.Fatalf("%d candidates: the copy found %v, FTS5 %v", candidates, withCopy, withFTS)
		}
	}
}
