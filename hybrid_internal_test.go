package custody

import (
	"math"
	"slices"
	"testing"
)

const semanticWeight = 0.5

// Weighted reciprocal rank fusion: a record found by both lists outranks
// one found first by either alone; each item says which lists found it
// and scores the sum of weight/(rrfK + rank).
func TestFuseWeighted(t *testing.T) {
	lex := []Ranked{{ID: "a", Score: 9}, {ID: "b", Score: 8}}
	sem := []Ranked{{ID: "b", Score: 0.9}, {ID: "c", Score: 0.8}}
	got := fuse(10, rankedList{lex, "lexical", 1, 0}, rankedList{sem, "semantic", semanticWeight, 0})
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
	if got := fuse(2, rankedList{lex, "lexical", 1, 0}, rankedList{sem, "semantic", semanticWeight, 0}); len(got) != 2 || got[0].ID != "b" {
		t.Errorf("fuse to 2 = %+v, want b and a", got)
	}
}

// Calibrated fusion: a list's score, min-max normalised over the list,
// adds its weight times the normalised score to the rank feature, so a
// record far ahead in score can pass one ahead in rank only; with no
// score weight the fusion is reciprocal rank fusion (above).
func TestFuseByScoreAndRank(t *testing.T) {
	lex := []Ranked{{ID: "a", Score: 10}, {ID: "b", Score: 9.9}, {ID: "c", Score: 1}}
	sem := []Ranked{{ID: "c", Score: 0.9}, {ID: "b", Score: 0.2}, {ID: "a", Score: 0.1}}
	byRank := fuse(3, rankedList{lex, "lexical", 1, 0}, rankedList{sem, "semantic", 1, 0})
	if ids := idsOf(byRank); !slices.Equal(ids, []string{"a", "c", "b"}) {
		// a: 1/11 + 1/13, c: 1/13 + 1/11 (a first: ties keep the first list's order), b: 1/12 + 1/12
		t.Fatalf("by rank: %v, want a c b", ids)
	}
	byScore := fuse(3, rankedList{lex, "lexical", 1, 0}, rankedList{sem, "semantic", 1, 0.1})
	// c's semantic score is the list's best (normalised 1), a's its last
	// (0), b's (0.2-0.1)/(0.9-0.1) = 0.125.
	want := map[string]float64{
		"a": 1.0/11 + 1.0/13,
		"b": 1.0/12 + 1.0/12 + 0.1*0.125,
		"c": 1.0/13 + 1.0/11 + 0.1,
	}
	if ids := idsOf(byScore); !slices.Equal(ids, []string{"c", "b", "a"}) {
		t.Fatalf("by rank and score: %v, want c b a", ids)
	}
	for _, h := range byScore {
		if math.Abs(h.Score-want[h.ID]) > 1e-12 {
			t.Errorf("%s scored %.6f, want %.6f", h.ID, h.Score, want[h.ID])
		}
	}
	// A list whose scores are all equal normalises each to 1.
	flat := fuse(2, rankedList{[]Ranked{{ID: "x", Score: 3}, {ID: "y", Score: 3}}, "lexical", 0, 1})
	if len(flat) != 2 || flat[0].Score != 1 || flat[1].Score != 1 {
		t.Errorf("equal scores fused to %+v, want 1 each", flat)
	}
}

// The model in use with no measurement's setting is defaultFusion, and
// a measurement's setting replaces it.
func TestFusionIn(t *testing.T) {
	var o Options
	if o.fusionIn() != defaultFusion {
		t.Errorf("fusion in use %+v, want the default %+v", o.fusionIn(), defaultFusion)
	}
	f := Fusion{SemanticRank: 2, LexicalScore: 0.1}
	o.Ranking.Fusion = &f
	if o.fusionIn() != f {
		t.Errorf("fusion in use %+v, want the measurement's %+v", o.fusionIn(), f)
	}
}

func idsOf(hits []candidate) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}
