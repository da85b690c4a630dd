package embed

import "slices"

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

// form derives the form of texts read as one. A function word (the
// scorer's stopwords) is left out; any other word the scorer would not
// count costs a slot and changes nothing. The words the table lacks share
// one string.
func (g *wordVectors) form(texts ...string) *gloveForm {
	f := &gloveForm{wv: g}
	var oov []byte
	var ends []int
	for _, text := range texts {
		eachWord(text, func(form string) {
			if stopwords[form] {
				return
			}
			if row := g.Row(form); row >= 0 {
				if !slices.Contains(f.rows, row) {
					f.rows = append(f.rows, row)
				}
				return
			}
			start := 0
			for _, end := range ends {
				if end-start == len(form) && string(oov[start:end]) == form {
					return
				}
				start = end
			}
			oov = append(oov, form...)
			ends = append(ends, len(oov))
		})
	}
	if len(ends) > 0 {
		all := string(oov)
		f.oov = make([]string, len(ends))
		start := 0
		for i, end := range ends {
			f.oov[i] = all[start:end]
			start = end
		}
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
