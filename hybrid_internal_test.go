package custody

import (
	"math"
	"slices"
	"testing"
)

// Weighted reciprocal rank fusion: a record found by both lists outranks
// one found first by either alone; each item says which lists found it
// and scores the sum of weight/(rrfK + rank).
func TestFuseWeighted(t *testing.T) {
	lex := []Ranked{{ID: "a", Score: 9}, {ID: "b", Score: 8}}
	sem := []Ranked{{ID: "b", Score: 0.9}, {ID: "c", Score: 0.8}}
	got := fuse(10, rankedList{lex, "lexical", 1}, rankedList{sem, "semantic", semanticWeight})
	want := []struct {
		id    string
		lists []string
		score float64
	}{
		{"b", []string{"lexical", "semantic"}, 1.0/(rrfK+2) + semanticWeight/(rrfK+1)},
		{"a", []string{"lexical"}, 1.0 / (rrfK + 1)},
		{"c", []string{"semantic"}, semanticWeight / (rrfK + 2)},
	}
	if len(got) != len(want) {
		t.Fatalf("fused %d items, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if got[i].ID != w.id || !slices.Equal(got[i].Lists, w.lists) || math.Abs(got[i].Score-w.score) > 1e-12 {
			t.Errorf("item %d = %s %v %.4f, want %s %v %.4f", i, got[i].ID, got[i].Lists, got[i].Score, w.id, w.lists, w.score)
		}
	}
	if got := fuse(2, rankedList{lex, "lexical", 1}, rankedList{sem, "semantic", semanticWeight}); len(got) != 2 || got[0].ID != "b" {
		t.Errorf("fuse to 2 = %+v, want b and a", got)
	}
}
