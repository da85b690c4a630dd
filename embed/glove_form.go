package embed

import (
	"encoding/binary"
	"slices"
	"strings"
	"unsafe"
)

// A glove form is a record's text as the glove scorer reads it: each
// word that counts (no function word) once, the table's words by their
// row, the others (names, numbers, identifiers) as they are. A text's
// score is, for each query word, its best similarity to any of the
// text's words, so neither the order of the words nor their repetition
// matters: scoring the form gives the text's score exactly.
//
// It is one slice of bytes with no pointer in it: a store keeps one for
// each of up to some hundred thousand records, and the collector has
// nothing in them to walk. Its layout, little-endian:
//
//	[0:4]         the table's tag (wordVectors.tag)
//	[4:8]         n, the number of words
//	[8:8+4n]      the words: a row of the table (>= 0), or, for a word
//	              the table lacks, -1 - the end of its bytes in the rest
//	              (it starts where the previous such word ends)
//	[8+4n:]       the bytes of the words the table lacks
const formHeader = 8

// form derives the form of texts read as one. A function word (the
// scorer's stopwords) is left out; any other word the scorer would not
// count costs a slot and changes nothing.
func (g *wordVectors) form(texts ...string) Form {
	var codes []int32
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
			return !slices.Contains(codes, row)
		}
		held, start := oov.String(), 0
		for _, c := range codes {
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
				codes = append(codes, row)
			} else {
				oov.WriteString(form)
				codes = append(codes, int32(-1-oov.Len()))
			}
			if seen == nil && len(codes) == formLinear {
				seen = make(map[string]bool, 2*formLinear)
				for _, c := range codes {
					if c >= 0 {
						seen[g.word(c)] = true
					}
				}
				held, start := oov.String(), 0
				for _, c := range codes {
					if c < 0 {
						seen[held[start:-1-c]] = true
						start = int(-1 - c)
					}
				}
			}
		})
	}
	f := make(Form, formHeader+4*len(codes)+oov.Len())
	binary.LittleEndian.PutUint32(f, g.tag)
	binary.LittleEndian.PutUint32(f[4:], uint32(len(codes)))
	for i, c := range codes {
		binary.LittleEndian.PutUint32(f[formHeader+4*i:], uint32(c))
	}
	copy(f[formHeader+4*len(codes):], oov.String())
	return f
}

// formLinear is how many words a form compares a new word with one by
// one before it keeps a set of them.
const formLinear = 64

// eachFormWord gives fn each word of f with its row of g's table, or -1
// for a word the table lacks (f's own bytes, not copied: a form is never
// changed once derived). It is false if f is not a form of g's table, or
// is malformed; fn may then have been given some of its words.
func (g *wordVectors) eachFormWord(f Form, fn func(word string, row int32)) bool {
	if len(f) < formHeader || binary.LittleEndian.Uint32(f) != g.tag {
		return false
	}
	n := int(binary.LittleEndian.Uint32(f[4:]))
	if n > (len(f)-formHeader)/4 {
		return false
	}
	oov := f[formHeader+4*n:]
	start := 0
	for i := range n {
		c := int32(binary.LittleEndian.Uint32(f[formHeader+4*i:]))
		if c >= 0 {
			if int(c) >= len(g.ends) {
				return false
			}
			fn(g.word(c), c)
			continue
		}
		end := int(-1 - c)
		if end <= start || end > len(oov) {
			return false
		}
		fn(unsafe.String(&oov[start], end-start), -1)
		start = end
	}
	return true
}

// scoreForm is the score of the texts f was derived from; ok is false if
// f is no form of this scorer's table.
func (s *wordScorer) scoreForm(f Form) (score float32, ok bool) {
	if len(s.q) == 0 {
		return 0, len(f) >= formHeader && binary.LittleEndian.Uint32(f) == s.g.tag
	}
	s.ready()
	clear(s.best)
	s.formWords = true
	ok = s.g.eachFormWord(f, s.matchRow)
	s.formWords = false
	if !ok {
		return 0, false
	}
	return s.sum(), true
}

// Form derives the form of a record's key and body (a JSON body's values,
// as Add takes it).
func (s *GloveScorer) Form(key, body string) Form { return s.ws.g.form(key, body) }

// AddForm scores one record by its form, as Add scores its text.
func (s *GloveScorer) AddForm(id string, f Form) bool {
	sc, ok := s.ws.scoreForm(f)
	if ok {
		s.add(id, sc)
	}
	return ok
}

var _ FormScorer = (*GloveScorer)(nil)
