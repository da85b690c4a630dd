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
type gloveForm struct {
	wv   *wordVectors // the table the rows are of
	rows []int32
	oov  []string
}

func (f *gloveForm) Bytes() int {
	n := 64 + 4*len(f.rows)
	for _, w := range f.oov {
		n += 16 + len(w)
	}
	return n
}

// form derives the form of texts read as one.
func (g *wordVectors) form(texts ...string) *gloveForm {
	f := &gloveForm{wv: g}
	for _, text := range texts {
		eachWord(text, func(form string) {
			if wordTerm(form) == "" {
				return
			}
			if row := g.Row(form); row >= 0 {
				if !slices.Contains(f.rows, row) {
					f.rows = append(f.rows, row)
				}
			} else if !slices.Contains(f.oov, form) {
				f.oov = append(f.oov, strings.Clone(form))
			}
		})
	}
	return f
}

// scoreForm is score of the texts f was derived from.
func (s *wordScorer) scoreForm(f *gloveForm) float32 {
	if len(s.q) == 0 {
		return 0
	}
	s.ready()
	clear(s.best)
	for _, row := range f.rows {
		s.matchRow(s.g.words[row], row)
	}
	for _, w := range f.oov {
		s.matchRow(w, -1)
	}
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
