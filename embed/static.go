package embed

import (
	"math"

	"github.com/custody-mem/custody/internal/lexical"
	"unicode"
	"unicode/utf8"
)

// Static is implemented by an embedder whose vector of a text is a pure
// function of the text and of the table it ships (Builtin): the same text
// gets the same vector on any server at any time. Such vectors need not
// be stored. A search scores its candidates from their texts as it reads
// them (TextScorer), so a write leaves nothing to compute behind it.
type Static interface {
	Embedder
	// Scorer is a TextScorer for the query text.
	Scorer(query string) TextScorer
}

// TextScorer ranks candidate records by their texts against one query.
// Add every candidate, then ask for the Top. It is for one goroutine.
type TextScorer interface {
	// Add scores one record by its text: its key, then its body (the
	// values of a JSON body, not its keys), read as one text.
	Add(id, key, body string)
	// Corpus sets how many records a query word's rarity is counted
	// over, as TermScorer.Corpus.
	Corpus(n int)
	// Top is the k best of the records added with a positive score,
	// best first, with their scores.
	Top(k int) ([]string, []float32)
}

// A Form is what a scorer derives from a record's text, to score it
// again for another query without reading the text: a store that keeps
// texts in memory keeps their forms with them, and may keep them in
// memory of its own (they hold no pointer). A form is never changed once
// derived, by its scorer or by a store: a scorer may read from it while
// scoring without copying it.
type Form []byte

// FormScorer is a TextScorer that scores a record from its Form.
type FormScorer interface {
	TextScorer
	// Form derives the form of a record's key and body (as Add reads
	// them).
	Form(key, body string) Form
	// AddForm scores one record by its form, as Add scores its text;
	// false (nothing added) if f was not derived by a scorer of the same
	// embedder.
	AddForm(id string, f Form) bool
}

// maxQueryWords bounds the words of a query scored one by one.
const maxQueryWords = 32

var _ Static = (*Builtin)(nil)

// Scorer scores records as TermScorer scores their vectors against the
// vectors of the query's words (one vector, the whole query's, when it
// has no word that carries meaning: it then matches nothing). A
// record's vector is summed from its words' cached sparse vectors into
// one array the scorer keeps for all its records (nothing is allocated
// per record), and is never stored.
func (b *Builtin) Scorer(query string) TextScorer {
	words := b.Terms(query)
	words = words[:min(len(words), maxQueryWords)]
	if len(words) == 0 {
		words = []string{query}
	}
	terms := make([][]float32, len(words))
	var exact map[string]int
	for i, w := range words {
		terms[i] = b.vector(w)
		if lexical.IsIdentifier(w) {
			if exact == nil {
				exact = map[string]int{}
			}
			exact[w] = i
		}
	}
	full := new([maxDim]float32)
	s := &textScorer{b: b, ts: NewTermScorer[string](terms), full: full, acc: full[:b.dim], exact: exact}
	if exact != nil {
		s.present = make([]bool, len(words))
		s.mark = func(form string) {
			if i, ok := s.exact[form]; ok {
				s.present[i] = true
			}
		}
	}
	return s
}

// textScorer is Builtin's TextScorer.
type textScorer struct {
	b      *Builtin
	ts     *TermScorer[string]
	full   *[maxDim]float32
	acc    []float32 // full[:dim], the vector of the record being added; zero between records
	tok    []byte    // the word being read, lower case
	tokens int       // words read of the record, function words included

	// exact are the query's identifiers (by term index): one matches a
	// record only when the record holds it whole or as a part of one of
	// its identifiers, as the search index matches it, never through
	// words it shares (acct-7777 never matches acct-7778 by acct).
	exact   map[string]int
	present []bool // per term, the record holds it (exact terms only)
	mark    func(form string)

	// unknown are the vectors of the words WordNet does not know read by
	// this scorer, which the embedder does not cache (computeWord): the
	// scorer's for its search alone.
	unknown map[string][]component
}

func (s *textScorer) Corpus(n int)                    { s.ts.Corpus(n) }
func (s *textScorer) Top(k int) ([]string, []float32) { return s.ts.Top(k) }

// Add sums the record's vector as Builtin.vector does for
// EmbedText(key, body) — its words in order, at most maxTokens of them
// counted, function words left out — and scores it by its cosine
// similarity to each query word's vector (exact: not rounded to int8 as
// the vectors once stored were).
func (s *textScorer) Add(id, key, body string) {
	s.tokens = 0
	s.sum(key)
	s.sum(body)
	var norm float64
	for _, x := range s.acc {
		norm += float64(x) * float64(x)
	}
	start := len(s.ts.sims)
	if norm == 0 {
		for range s.ts.terms {
			s.ts.sims = append(s.ts.sims, 0)
		}
	} else {
		k := float32(1 / math.Sqrt(norm))
		for _, t := range s.ts.terms {
			s.ts.sims = append(s.ts.sims, Dot(t, s.acc)*k)
		}
		clear(s.acc)
	}
	if s.exact != nil {
		s.matchExact(key, body, s.ts.sims[start:])
	}
	s.ts.added(id, start)
}

// matchExact zeroes the similarity of each of the query's identifiers
// the record (key and body) does not hold.
func (s *textScorer) matchExact(key, body string, sims []float32) {
	clear(s.present)
	lexical.EachWord(key, true, s.mark)
	lexical.EachWord(body, true, s.mark)
	for _, i := range s.exact {
		if !s.present[i] {
			sims[i] = 0
		}
	}
}

// sum adds the words of text to the record's vector: the runs of
// letters and digits of its lower case (as tokenRE finds them in
// strings.ToLower(text)).
func (s *textScorer) sum(text string) {
	tok := s.tok[:0]
	for _, r := range text {
		if s.tokens >= maxTokens {
			break
		}
		var in bool
		if r < utf8.RuneSelf {
			if 'A' <= r && r <= 'Z' {
				r += 'a' - 'A'
			}
			in = 'a' <= r && r <= 'z' || '0' <= r && r <= '9'
		} else {
			r = unicode.ToLower(r)
			in = unicode.IsLetter(r) || unicode.IsNumber(r)
		}
		if in {
			tok = utf8.AppendRune(tok, r)
		} else if len(tok) > 0 {
			s.word(tok)
			tok = tok[:0]
		}
	}
	if len(tok) > 0 && s.tokens < maxTokens {
		s.word(tok)
	}
	s.tok = tok[:0]
}

// uncached is the vector of a word the embedder has not cached: computed
// (and cached, if WordNet knows it), or an unknown word this scorer read
// before.
func (s *textScorer) uncached(tok []byte) []component {
	if c, ok := s.unknown[string(tok)]; ok {
		return c
	}
	w := string(tok)
	c, known := s.b.computeWord(w)
	if !known {
		if s.unknown == nil {
			s.unknown = map[string][]component{}
		}
		s.unknown[w] = c
	}
	return c
}

// word adds the vector of one word (cached by Builtin.word).
func (s *textScorer) word(tok []byte) {
	s.tokens++
	if stopwords[string(tok)] {
		return
	}
	c, ok := s.b.words.get(tok)
	if !ok {
		c = s.uncached(tok)
	}
	acc := s.full
	for _, x := range c {
		acc[x.i&(maxDim-1)] += x.w // x.i < dim ≤ maxDim: no bounds check
	}
}
