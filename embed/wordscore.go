package embed

import (
	"math"
	"strings"
	"sync"

	"github.com/custody-mem/custody/internal/lexical"
)

// wordScorer ranks texts against one query word by word: each query word
// is matched to the text's most similar word, and the text's score is
// the mean of those best similarities, each query word weighted by its
// rarity. Two words are similar as their GloVe vectors are (cosine, past
// a floor below which words are unrelated); a word of the same English
// stem is an exact match (1). A word the table does not hold (a name it
// does not know, a number, an identifier such as ACCT-7777, kept whole
// as the search index keeps it) matches only itself, so an identifier
// never finds another that shares its parts. Scores are in [0, 1].
//
// A wordScorer remembers each text word's similarities to the query's
// words, so scoring the candidates of one query costs a few table
// lookups per word once their words have been seen. It is for one query
// at a time: not safe for concurrent use.
type wordScorer struct {
	g     *wordVectors
	p     wordParams
	q     []queryWord
	total float32
	byRow []int32 // a table word's row -> 1 + offset of its similarities in sims; 0: not yet seen; -1: not a word that counts
	// formWords is set while a form is scored: its words are held by the
	// form, which outlives the query, and memo keys them as they are
	// (a text's words are cloned, so as not to hold a long text).
	formWords bool
	touched   []int32          // the rows of byRow set: release clears them
	memo      map[string]int32 // the same for words the table does not hold
	kept      int              // words remembered
	sims      []float32        // len(q) per remembered word
	best      []float32
	scratch   []float32 // a word's similarities when there is no room left
}

type queryWord struct {
	term string // the search index's term: the stem, or the identifier
	row  int32  // its vector's row, -1 for none
	w    float32
}

// wordParams are the word scorer's settings (docs/search.md, "The glove
// signal", says how they were chosen).
type wordParams struct {
	floor   float32 // cosine at or below which two words are unrelated
	synonym float32 // the similarity of two different words at cosine 1
	rank0   float64 // rarity: a word of frequency rank r weighs ln(1 + (r+1)/rank0)
}

var defaultWordParams = wordParams{floor: 0.2, synonym: 0.5, rank0: 1}

// maxRemembered bounds the text words a wordScorer remembers (beyond,
// their similarities are computed each time they are met).
const maxRemembered = 1 << 15

// maxScoredWords bounds the words of one query that are scored.
const maxScoredWords = 32

// scorer returns a wordScorer for query; one without words (a query of
// function words only) scores every text 0.
func (g *wordVectors) scorer(query string, p wordParams) *wordScorer {
	s := &wordScorer{g: g, p: p}
	lexical.EachWord(query, false, func(form string) {
		t := wordTerm(form)
		if t == "" || len(s.q) == maxScoredWords {
			return
		}
		for _, q := range s.q {
			if q.term == t {
				return
			}
		}
		row := g.Row(form)
		rank := float64(g.Len())
		if row >= 0 {
			rank = float64(row)
		}
		w := float32(math.Log(1 + (rank+1)/p.rank0))
		s.q = append(s.q, queryWord{term: t, row: row, w: w})
		s.total += w
	})
	s.best = make([]float32, len(s.q))
	return s
}

// Words is the number of query words scored.
func (s *wordScorer) Words() int { return len(s.q) }

// score is the similarity to the query of the texts read as one (a
// record's key and body), in [0, 1].
func (s *wordScorer) score(texts ...string) float32 {
	if len(s.q) == 0 {
		return 0
	}
	s.ready()
	clear(s.best)
	for _, text := range texts {
		eachWord(text, s.match)
	}
	return s.sum()
}

// eachWord gives fn each word of text as the scorer reads it.
func eachWord(text string, fn func(form string)) { lexical.EachWord(text, true, fn) }

// ready makes the scorer's memory of text words on its first text,
// from one a scorer released if there is one: a row for every word of
// the table (200 KB) was most of what a search allocated, and the
// collector's work followed it.
func (s *wordScorer) ready() {
	if s.byRow != nil {
		return
	}
	if m, _ := scorerMemory.Get().(*wordMemory); m != nil && len(m.byRow) == s.g.Len() {
		s.byRow, s.sims, s.memo = m.byRow, m.sims[:0], m.memo
	} else {
		s.byRow = make([]int32, s.g.Len())
		s.sims = make([]float32, 0, 1024*len(s.q))
		s.memo = make(map[string]int32, 64)
	}
}

// wordMemory is a released scorer's memory of text words: byRow all
// zero, sims of any length, memo empty.
type wordMemory struct {
	byRow []int32
	sims  []float32
	memo  map[string]int32
}

var scorerMemory sync.Pool // *wordMemory

// release gives the scorer's memory of text words to the next scorer's;
// scoring again makes another.
func (s *wordScorer) release() {
	if s.byRow == nil {
		return
	}
	for _, row := range s.touched {
		s.byRow[row] = 0
	}
	clear(s.memo) // its keys may view a store's kept texts (formWords)
	scorerMemory.Put(&wordMemory{byRow: s.byRow, sims: s.sims, memo: s.memo})
	s.byRow, s.sims, s.memo, s.touched, s.kept = nil, nil, nil, s.touched[:0], 0
}

// sum is the text's score from the query words' best similarities.
func (s *wordScorer) sum() float32 {
	var sum float32
	for i, q := range s.q {
		sum += q.w * s.best[i]
	}
	return sum / s.total
}

// match counts one word of a text: each query word's best similarity so
// far.
func (s *wordScorer) match(form string) { s.matchRow(form, s.g.Row(form)) }

// matchRow is match of a word whose row in the table is row (-1: none).
func (s *wordScorer) matchRow(form string, row int32) {
	var off int32
	if row >= 0 {
		off = s.byRow[row] - 1
	} else {
		o, ok := s.memo[form]
		off = o - 1
		if !ok {
			off = -1
		}
	}
	var sims []float32
	switch {
	case off >= 0:
		sims = s.sims[off : int(off)+len(s.q)]
	case off == -2:
		return // a function word, seen before
	default:
		if sims = s.remember(form, row); sims == nil {
			return
		}
	}
	for i, x := range sims {
		s.best[i] = max(s.best[i], x)
	}
}

// remember computes a text word's similarities to the query's words and
// keeps them while there is room; nil for a word that does not count (a
// function word).
func (s *wordScorer) remember(form string, row int32) []float32 {
	room := s.kept < maxRemembered
	keep := func(v int32) {
		if !room {
			return
		}
		s.kept++
		if row >= 0 {
			s.byRow[row] = v
			s.touched = append(s.touched, row)
		} else {
			if !s.formWords {
				form = strings.Clone(form)
			}
			s.memo[form] = v
		}
	}
	t := wordTerm(form)
	if t == "" {
		keep(-1)
		return nil
	}
	out := s.scratch[:0]
	off := len(s.sims)
	if room {
		out = s.sims
	}
	for _, q := range s.q {
		out = append(out, s.similarity(q, t, row))
	}
	if !room {
		s.scratch = out
		return out
	}
	s.sims = out
	keep(int32(off) + 1)
	return out[off:]
}

// similarity is how far a text word (term t, vector row) matches query
// word q.
func (s *wordScorer) similarity(q queryWord, t string, row int32) float32 {
	if t == q.term {
		return 1
	}
	if q.row < 0 || row < 0 {
		return 0
	}
	c := s.g.Cosine(q.row, row)
	if c <= s.p.floor {
		return 0
	}
	return s.p.synonym * (c - s.p.floor) / (1 - s.p.floor)
}

// wordTerm is the search index's term of a lower-case word form: its
// stem, or the identifier whole; "" for a function word.
func wordTerm(form string) string {
	if stopwords[form] {
		return ""
	}
	return lexical.Term(form)
}
