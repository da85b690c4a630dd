package embed_test

import (
	"math"
	"strings"
	"testing"

	"github.com/custody-mem/custody/embed"
)

// TestStaticScorer: a record scored from its text gets the cosine
// similarity of its vector (the text's words, in any case or script, at
// most the first 2,048 of them counting; an identifier matching only a
// text that holds it), and a query of several words ranks as TermScorer
// ranked the stored vectors, with their scores but for int8 rounding.
func TestStaticScorer(t *testing.T) {
	b := builtin(t)
	long := strings.Repeat("garden ", 2048) + "zorblatt"
	texts := []string{"I like SHORT answers", "Ärger in İstanbul: naïve ÉCOLE 42abc", "the garden needs watering", "", "the and of", long, "zorblatt\x80arrived"}
	for _, q := range []string{"replies", "ärger", "école", "42abc", "garden", "zorblatt", "arrived"} {
		qv := vec(t, b, q)[0]
		s := b.Scorer(q)
		for i, text := range texts {
			s.Add(string(rune('a'+i)), "", text)
		}
		ids, scores := s.Top(len(texts))
		got := map[string]float32{}
		for i, id := range ids {
			got[id] = scores[i]
		}
		for i, text := range texts {
			want := embed.Dot(qv, vec(t, b, text)[0])
			if want <= 0 || q == "42abc" && !strings.Contains(strings.ToLower(text), q) {
				want = 0 // not a match, or an identifier the text does not hold: left out
			}
			if g := got[string(rune('a'+i))]; math.Abs(float64(g-want)) > 1e-5 {
				t.Errorf("%q against %q: scored %.6f, the cosine of its vector %.6f", q, text, g, want)
			}
		}
	}
	// The key's words count, read before the body's.
	s := b.Scorer("zorblatt")
	s.Add("k", "zorblatt", "the parcel arrived")
	if ids, _ := s.Top(1); len(ids) != 1 {
		t.Error("a word of the key was not scored")
	}

	docs := []string{"the trip was long", "the trip was fun", "we adopted a puppy on the trip", "a puppy", "what is it"}
	q := "trip with the puppy"
	stored := embed.NewTermScorer[string](vec(t, b, b.Terms(q)...))
	text := b.Scorer(q)
	for i, d := range docs {
		id := string(rune('a' + i))
		if err := stored.Add(id, embed.Quantize(vec(t, b, d)[0])); err != nil {
			t.Fatal(err)
		}
		text.Add(id, "", d)
	}
	stored.Corpus(100)
	text.Corpus(100)
	wantIDs, wantScores := stored.Top(10)
	ids, scores := text.Top(10)
	if strings.Join(ids, "") != strings.Join(wantIDs, "") || len(ids) != 4 || ids[0] != "c" {
		t.Fatalf("from texts %v, from stored vectors %v; want c first and the same order", ids, wantIDs)
	}
	for i := range ids {
		if math.Abs(float64(scores[i]/wantScores[i]-1)) > 0.02 {
			t.Errorf("score of %s: %.4f from its text, %.4f from its stored vector (rounded to int8: within 2%%)", ids[i], scores[i], wantScores[i])
		}
	}
	if ids, _ := b.Scorer("what is it").Top(5); len(ids) != 0 {
		t.Errorf("a query of function words matched %v", ids)
	}
}

// BenchmarkStaticScorer times scoring 400 candidates of about 20 words
// from their texts against a query of three words, the semantic list's
// work per search: go test ./embed -run '^$' -bench StaticScorer
func BenchmarkStaticScorer(b *testing.B) {
	benchStaticScorer(b, "meeting travel payroll garden recipe flight doctor school budget concert library hiking tax insurance birthday dentist plumber holiday report invoice answer reply short brief")
}

// BenchmarkStaticScorerNames is BenchmarkStaticScorer with a fifth of the
// candidates' words unknown to WordNet (names, numbers, identifiers),
// which the embedder does not cache.
func BenchmarkStaticScorerNames(b *testing.B) {
	benchStaticScorer(b, "meeting travel payroll garden recipe flight doctor school budget concert library hiking tax insurance birthday dentist plumber holiday report invoice answer reply short brief caroline melanie 2023 acct-7731 zqxj 1990s oscar")
}

func benchStaticScorer(b *testing.B, vocabulary string) {
	e, err := embed.NewBuiltin(0)
	if err != nil {
		b.Fatal(err)
	}
	words := strings.Fields(vocabulary)
	texts := make([]string, 400)
	for i := range texts {
		var sb strings.Builder
		for k := range 20 {
			sb.WriteString(words[(i*7+k*13)%len(words)])
			sb.WriteString(" ")
		}
		texts[i] = sb.String()
	}
	for b.Loop() {
		s := e.Scorer("brief garden meeting")
		for i, t := range texts {
			s.Add(words[i%len(words)], "", t)
		}
		s.Corpus(10000)
		s.Top(100)
	}
}
