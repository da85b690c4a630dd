package embed

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// A word expands into itself, its lemma and the lemmas sharing synset
// weight with it (brief → short, replies → answer, ran → run), at most n
// of them, never a lemma of several words; a word WordNet does not know
// is only itself.
func TestBuiltinExpand(t *testing.T) {
	b, err := NewBuiltin(0)
	if err != nil {
		t.Fatal(err)
	}
	for word, want := range map[string][]string{
		"brief":   {"brief", "short", "concise"},
		"replies": {"replies", "reply", "answer", "response"},
		"ran":     {"ran", "run"},
		"run":     {"run", "ran"},
	} {
		got := b.Expand(word, 24)
		if len(got) == 0 || got[0] != word || len(got) > 24 {
			t.Errorf("Expand(%q, 24) = %v: want %q first, at most 24", word, got, word)
		}
		for _, w := range want {
			if !slices.Contains(got, w) {
				t.Errorf("Expand(%q, 24) = %v lacks %q", word, got, w)
			}
		}
		for _, w := range got {
			if strings.ContainsAny(w, "-_ ") {
				t.Errorf("Expand(%q) holds %q, which is never one word of a text", word, w)
			}
		}
	}
	if got := b.Expand("invoice17", 24); !slices.Equal(got, []string{"invoice17"}) {
		t.Errorf("Expand(invoice17) = %v, want itself only", got)
	}
	if got := b.Expand("brief", 3); len(got) != 3 {
		t.Errorf("Expand(brief, 3) = %v, want 3 words", got)
	}
}

// Every word whose vector shares a synset component with a query word's
// is in its full expansion: a record outside it is similar only by noise.
func TestBuiltinExpandCoversSharedSynsets(t *testing.T) {
	b, err := NewBuiltin(0)
	if err != nil {
		t.Fatal(err)
	}
	all := b.Expand("answer", 1<<20)
	for _, w := range []string{"reply", "response", "solution", "respond"} {
		if !slices.Contains(all, w) {
			t.Errorf("the expansion of answer lacks %q", w)
		}
	}
	// And a word sharing nothing is not in it, however similar by noise.
	vs, err := b.Embed(context.Background(), []string{"answer", "garden"})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(all, "garden") {
		t.Errorf("the expansion of answer holds garden (similarity %.3f)", Dot(vs[0], vs[1]))
	}
}

// Corpus weighs a word's rarity as among n records: with it, a word every
// candidate holds still counts.
func TestTermScorerCorpus(t *testing.T) {
	b, err := NewBuiltin(0)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	q, _ := b.Embed(ctx, []string{"garden", "invoice"})
	docs, _ := b.Embed(ctx, []string{"garden", "garden invoice"})
	score := func(corpus int) float32 {
		s := NewTermScorer[int](q)
		s.Corpus(corpus)
		for i, d := range docs {
			if err := s.Add(i, Quantize(d)); err != nil {
				t.Fatal(err)
			}
		}
		ids, scores := s.Top(2)
		for i, id := range ids {
			if id == 0 {
				return scores[i]
			}
		}
		return 0
	}
	if among2, among1000 := score(0), score(1000); among1000 <= among2*2 {
		t.Errorf("the garden-only record scores %.3f among 2 records and %.3f among 1000: want garden to weigh far more among 1000", among2, among1000)
	}
}
