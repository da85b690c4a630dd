package embed

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
)

// wordnetTable is WordNet 3.0 compacted by internal/gen (see
// WORDNET-LICENSE beside it).
//
//go:embed wordnet.gz
var wordnetTable []byte

// sense is one meaning of a lemma: a synset and its frequency rank among
// the lemma's senses of one part of speech (0 = most frequent).
type sense struct {
	syn  int32
	rank uint8
}

// lexicon is the loaded table.
type lexicon struct {
	hyper, near [][]int32 // per synset
	glosses     int       // number of glosses, the corpus of lemma.df
	lemmas      map[string]lemma
	exceptions  map[string]string // irregular form -> base form
}

type lemma struct {
	count  int // occurrences in the sense-tagged corpus (SemCor)
	df     int // glosses it occurs in
	senses []sense
}

var (
	lexOnce sync.Once
	lex     *lexicon
	lexErr  error
)

// loadLexicon reads the embedded table once.
func loadLexicon() (*lexicon, error) {
	lexOnce.Do(func() { lex, lexErr = readLexicon(wordnetTable) })
	return lex, lexErr
}

func readLexicon(gz []byte) (*lexicon, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("embed: wordnet table: %w", err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("embed: wordnet table: %w", err)
	}
	if !bytes.HasPrefix(raw, []byte("WNT2")) {
		return nil, errors.New("embed: wordnet table: not a WNT2 table (run go generate in embed/)")
	}
	r := &tableReader{b: raw[4:]}
	l := &lexicon{lemmas: map[string]lemma{}, exceptions: map[string]string{}}
	l.glosses = r.int()
	n := r.int()
	l.hyper, l.near = make([][]int32, n), make([][]int32, n)
	for i := range n {
		l.hyper[i] = r.ints()
		l.near[i] = r.ints()
	}
	for range r.int() {
		name := r.str()
		lm := lemma{count: r.int(), df: r.int()}
		lm.senses = make([]sense, r.int())
		for j := range lm.senses {
			lm.senses[j] = sense{syn: int32(r.int()), rank: uint8(min(r.int(), 255))}
		}
		l.lemmas[name] = lm
	}
	for range r.int() {
		f := r.str()
		l.exceptions[f] = r.str()
	}
	if r.err != nil {
		return nil, fmt.Errorf("embed: wordnet table: %w", r.err)
	}
	return l, nil
}

type tableReader struct {
	b   []byte
	err error
}

func (r *tableReader) int() int {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errors.New("truncated")
		r.b = nil
		return 0
	}
	r.b = r.b[n:]
	return int(v)
}

func (r *tableReader) ints() []int32 {
	n := r.int()
	if n == 0 {
		return nil
	}
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(r.int())
	}
	return out
}

func (r *tableReader) str() string {
	n := r.int()
	if n > len(r.b) {
		r.err = errors.New("truncated")
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

// suffixes are WordNet's detachment rules (morphy), for all parts of speech.
var suffixes = [][2]string{
	{"s", ""}, {"ses", "s"}, {"xes", "x"}, {"zes", "z"}, {"ches", "ch"}, {"shes", "sh"}, {"men", "man"}, {"ies", "y"},
	{"es", "e"}, {"es", ""}, {"ed", "e"}, {"ed", ""}, {"ing", "e"}, {"ing", ""},
	{"er", ""}, {"est", ""}, {"er", "e"}, {"est", "e"},
}

// base is the lemma of a word form: the form itself when WordNet knows
// it, else its irregular base, else the first base form the detachment
// rules give that WordNet knows; "" when none.
func (l *lexicon) base(w string) string {
	if _, ok := l.lemmas[w]; ok {
		return w
	}
	if b, ok := l.exceptions[w]; ok {
		if _, ok := l.lemmas[b]; ok {
			return b
		}
	}
	for _, s := range suffixes {
		if strings.HasSuffix(w, s[0]) && len(w) > len(s[0])+1 {
			b := w[:len(w)-len(s[0])] + s[1]
			if _, ok := l.lemmas[b]; ok {
				return b
			}
		}
	}
	// a doubled consonant before -ing/-ed: running -> run, planned -> plan
	for _, s := range []string{"ing", "ed"} {
		if strings.HasSuffix(w, s) && len(w) > len(s)+2 {
			stem := w[:len(w)-len(s)]
			if stem[len(stem)-1] == stem[len(stem)-2] {
				if _, ok := l.lemmas[stem[:len(stem)-1]]; ok {
					return stem[:len(stem)-1]
				}
			}
		}
	}
	return ""
}
