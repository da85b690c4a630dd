package embed

import (
	"slices"
	"strings"
)

// gloveForm is a record's text as the glove scorer reads it: each word
// that counts (no function word) once, the table's words by their row,
// the others (names, numbers, identifiers) as they are. A text's score
// is, for each query word, its best similarity to any of the text's
// words, so neither the order of the words nor their repetition matters:
// scoring the form gives the text's score exactly.
//
// It is three allocations, whatever its words: a store keeps one for
// each of up to some hundred thousand records, and the collector walks
// them all.
type gloveForm struct {
	wv *wordVectors // the table the rows are of
	// codes are the words: a row of the table (>= 0), or, for a word the
	// table lacks, -1 - the end of its bytes in oov (it starts where the
	// previous such word ends).
	codes []int32
	oov   string
}

func (f *gloveForm) Bytes() int { return 64 + 4*len(f.codes) + len(f.oov) }

// form derives the form of texts read as one. A function word (the
// scorer's stopwords) is left out; any other word the scorer would not
// count costs a slot and changes nothing.
func (g *wordVectors) form(texts ...string) *gloveForm {
	f := &gloveForm{wv: g}
	var oov strings.Builder
	// seen holds the words met past the first formLinear: a long text is
	// not compared with each of its words for each of them.
	var seen map[string]bool
	isNew := func(form string, row int32) bool {
		if seen != nil {
			if seen[form] {
				return false
			}
			seen[form] = true
			return true
		}
		if row >= 0 {
			return !slices.Contains(f.codes, row)
		}
		held, start := oov.String(), 0
		for _, c := range f.codes {
			if c < 0 {
				if end := int(-1 - c); held[start:end] == form {
					return false
				} else {
					start = end
				}
			}
		}
		return true
	}
	for _, text := range texts {
		eachWord(text, func(form string) {
			if stopwords[form] {
				return
			}
			row := g.Row(form)
			if !isNew(form, row) {
				return
			}
			if row >= 0 {
				f.codes = append(f.codes, row)
			} else {
				oov.WriteString(form)
				f.codes = append(f.codes, int32(-1-oov.Len()))
			}
			if seen == nil && len(f.codes) == formLinear {
				seen = make(map[string]bool, 2*formLinear)
				f.eachWord(oov.String(), func(w string) { seen[w] = true })
			}
		})
	}
	f.codes = slices.Clip(f.codes)
	f.oov = strings.Clone(oov.String())
	return f
}

// formLinear is how many words a form compares a new word with one by
// one before it keeps a set of them.
const formLinear = 64

// eachWord gives fn each word of f, with oov as f's words the table
// lacks (f.oov once it is set).
func (f *gloveForm) eachWord(oov string, fn func(w string)) {
	start := 0
	for _, c := range f.codes {
		if c >= 0 {
			fn(f.wv.words[c])
			continue
		}
		end := int(-1 - c)
		fn(oov[start:end])
		start = end
	}
}

// scoreForm is score of the texts f was derived from.
func (s *wordScorer) scoreForm(f *gloveForm) float32 {
	if len(s.q) == 0 {
		return 0
	}
	s.ready()
	clear(s.best)
	s.formWords = true
	start := 0
	for _, c := range f.codes {
		if c >= 0 {
			s.matchRow(s.g.words[c], c)
			continue
		}
		end := int(-1 - c)
		s.matchRow(f.oov[start:end], -1)
		start = end
	}
	s.formWords = false
	return s.sum()
}

// Form derives the form of a record's key and body (a JSON body's values,
// as Add takes it).
func (s *GloveScorer) Form(key, body string) Form { return s.ws.g.form(key, body) }

// AddForm scores one record by its form, as Add scores its text.
func (s *GloveScorer) AddForm(id string, f Form) bool {
	gf, ok := f.(*gloveForm)
	if !ok || gf.wv != s.ws.g {
		return false
	}
	if sc := s.ws.scoreForm(gf); sc > 0 {
		s.ids = append(s.ids, id)
		s.scores = append(s.scores, sc)
	}
	return true
}

var _ FormScorer = (*GloveScorer)(nil)
