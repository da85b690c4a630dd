package embed

import (
	"fmt"
	"slices"
	"strconv"
	"testing"
)

// TestWordCacheBounded: the cache never holds more than two generations'
// components, and a word read often stays in it while words read once
// pass through (its twin: a word read once is found until two
// generations have filled after it).
func TestWordCacheBounded(t *testing.T) {
	c := newWordCache(100)
	vec := make([]component, 10)
	c.put("often", vec)
	for i := range 1000 {
		c.put("once"+strconv.Itoa(i), vec)
		if _, ok := c.get([]byte("often")); !ok {
			t.Fatalf("the word read often was dropped after %d others", i+1)
		}
		total := c.size
		for _, v := range c.prev {
			total += len(v)
		}
		if total > 200 {
			t.Fatalf("%d components cached, want at most 200", total)
		}
	}
	if _, ok := c.get([]byte("once999")); !ok {
		t.Error("the word cached last is not found")
	}
	if _, ok := c.get([]byte("once0")); ok {
		t.Error("a word read once, 999 words ago, is still cached")
	}
}

// The built-in embedder caches the vectors of the words WordNet knows, and
// computes a word it does not know (a name, a number, an identifier) each
// time: a record's own words are not kept in memory past its erasure, as
// its candidate text is scored or its body embedded. Scores are the same
// either way.
func TestBuiltinCachesKnownWordsAlone(t *testing.T) {
	b, err := NewBuiltin(0)
	if err != nil {
		t.Fatal(err)
	}
	cached := func(w string) bool {
		_, ok := b.words.get([]byte(w))
		return ok
	}
	body := "the invoice of account zqxjvorb-7731 is overdue"
	// The same account as real content spells it: a non-breaking hyphen
	// and space, a zero-width space and a bidi mark inside it,
	// Arabic-Indic and full-width digits, and a JSON value.
	spellings := []string{
		"account zqxjvorb\u20117731 is\u00a0overdue",
		"account zqx\u200bjvorb-7731 is overdue",
		"account \u202ezqxjvorb\u202c-\u0667\u0667\u0663\u0661 is overdue",
		"account zqxjvorb-\uff17\uff17\uff13\uff11 is overdue",
		`{"account": "zqxjvorb-7731", "status": "overdue"}`,
	}
	s := b.Scorer("overdue invoice")
	s.Add("r1", "", body)
	other := b.Scorer("overdue account")
	for i, sp := range spellings {
		other.Add(fmt.Sprint("r", i+2), "", sp)
	}
	if _, err := b.Embed(t.Context(), append([]string{body}, spellings...)); err != nil {
		t.Fatal(err)
	}
	if !cached("invoice") || !cached("overdue") || !cached("account") {
		t.Fatal("the words WordNet knows are not cached")
	}
	for _, gen := range []map[string][]component{b.words.cur, b.words.prev} {
		for w := range gen {
			if _, known := b.lex.lemma(b.lex.base(w)); !known {
				t.Fatalf("the word %q, which WordNet does not know, is cached", w)
			}
		}
	}
	again := b.Scorer("overdue invoice")
	again.Add("r1", "", body)
	ids1, scores1 := s.Top(1)
	ids2, scores2 := again.Top(1)
	if len(ids1) != 1 || ids1[0] != ids2[0] || scores1[0] != scores2[0] || scores1[0] <= 0 {
		t.Fatalf("scored %v %v, then %v %v; want the same positive score", ids1, scores1, ids2, scores2)
	}
}

// An unknown word's vector, built from its seed alone, is the one its
// seed sums into a vector of zeros (add), at any dimension: in the
// smallest its indexes meet, and some cancel.
func TestUnknownWordAsAddSumsIt(t *testing.T) {
	for _, dim := range []int{32, 512} {
		b, err := NewBuiltin(dim)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3000 {
			seed := wordSeed("w" + strconv.Itoa(i))
			v := make([]float32, b.dim)
			b.add(v, seed, b.p.unknown*b.p.word)
			var want []component
			for j, x := range v {
				if x != 0 {
					want = append(want, component{int32(j), x})
				}
			}
			if got := b.unknownWord(seed); !slices.Equal(got, want) {
				t.Fatalf("dim %d, word %d: %v, want %v", dim, i, got, want)
			}
		}
	}
}
