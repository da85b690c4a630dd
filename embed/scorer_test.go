package embed_test

import (
	"testing"

	"github.com/custody-mem/custody/embed"
)

// TestTermScorer: scored word by word, a record matching the query's rare
// word outranks records matching only its common word; with one query
// vector the ranking is by cosine similarity.
func TestTermScorer(t *testing.T) {
	b := builtin(t)
	docs := []string{"the trip was long", "the trip was fun", "the trip was tiring", "we adopted a puppy on the trip", "a puppy"}
	vs := vec(t, b, docs...)
	q := vec(t, b, b.Terms("trip with the puppy")...)
	if len(q) != 2 {
		t.Fatalf("terms of the query: %v, want trip and puppy", b.Terms("trip with the puppy"))
	}
	s := embed.NewTermScorer[int](q)
	for i, v := range vs {
		if err := s.Add(i, embed.Quantize(v)); err != nil {
			t.Fatal(err)
		}
	}
	ids, scores := s.Top(3)
	if len(ids) != 3 || ids[0] != 3 || ids[1] != 4 || scores[0] < scores[1] || scores[1] < scores[2] {
		t.Errorf("top 3 = %v %v, want 3 (both words), then 4 (the rare word)", ids, scores)
	}
	one := embed.NewTermScorer[int](vec(t, b, "a puppy"))
	for i, v := range vs {
		one.Add(i, embed.Quantize(v))
	}
	if ids, scores := one.Top(1); len(ids) != 1 || ids[0] != 4 || scores[0] < 0.99 {
		t.Errorf("one vector: top = %v %v, want the same text, similarity 1", ids, scores)
	}
	// A query of function words only has a zero vector: it matches nothing.
	none := embed.NewTermScorer[int](vec(t, b, "what is it"))
	for i, v := range vs {
		none.Add(i, embed.Quantize(v))
	}
	if ids, _ := none.Top(3); len(ids) != 0 {
		t.Errorf("a query without content words matched %v", ids)
	}
	if err := one.Add(9, embed.Quantize(make([]float32, 8))); err == nil {
		t.Error("a vector of another dimension was scored")
	}
}
