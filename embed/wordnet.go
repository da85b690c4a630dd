package embed

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
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

// lexicon is the loaded table, held compactly (a few MB): the lemmas'
// names are one sorted string, looked up by binary search, and each
// per-lemma or per-synset list is a range of one shared slice.
type lexicon struct {
	rel    []int32  // synset s's hypernyms: rel[relOff[2s]:relOff[2s+1]]; its near relations: rel[relOff[2s+1]:relOff[2s+2]]
	relOff []uint32 // 2 × synsets + 1
	names  string   // the lemmas' names, in byte order, concatenated
	// lemma i is names[nameOff[i]:nameOff[i+1]]; its senses are
	// senses[nameSenses[i]:nameSenses[i+1]]
	nameOff    []uint32
	nameSenses []uint32
	senses     []sense
	exceptions map[string]string // irregular form -> base form
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
	l := &lexicon{exceptions: map[string]string{}}
	r.int() // the number of glosses (gloss frequencies are not used)
	n := r.int()
	l.relOff = make([]uint32, 0, 2*n+1)
	l.relOff = append(l.relOff, 0)
	for range 2 * n { // hypernyms, then near relations, of each synset
		for range r.int() {
			l.rel = append(l.rel, int32(r.int()))
		}
		l.relOff = append(l.relOff, uint32(len(l.rel)))
	}
	var names strings.Builder
	nl := r.int()
	l.nameOff = make([]uint32, 1, nl+1)
	l.nameSenses = make([]uint32, 1, nl+1)
	prev := ""
	for i := range nl {
		name := r.str()
		if i > 0 && name <= prev {
			return nil, errors.New("embed: wordnet table: lemmas out of order (run go generate in embed/)")
		}
		prev = name
		names.WriteString(name)
		l.nameOff = append(l.nameOff, uint32(names.Len()))
		r.int() // SemCor count
		r.int() // gloss frequency
		for range r.int() {
			l.senses = append(l.senses, sense{syn: int32(r.int()), rank: uint8(min(r.int(), 255))})
		}
		l.nameSenses = append(l.nameSenses, uint32(len(l.senses)))
	}
	l.names = names.String()
	for range r.int() {
		f := r.str()
		l.exceptions[f] = r.str()
	}
	if r.err != nil {
		return nil, fmt.Errorf("embed: wordnet table: %w", r.err)
	}
	l.rel, l.senses = slices.Clip(l.rel), slices.Clip(l.senses)
	return l, nil
}

// lemmaCount is the number of lemmas.
func (l *lexicon) lemmaCount() int { return len(l.nameOff) - 1 }

// name is lemma i's name.
func (l *lexicon) name(i int) string { return l.names[l.nameOff[i]:l.nameOff[i+1]] }

// lemma is the index of the lemma w; ok is false when WordNet does not
// know it.
func (l *lexicon) lemma(w string) (i int, ok bool) {
	return sort.Find(l.lemmaCount(), func(i int) int { return strings.Compare(w, l.name(i)) })
}

// sensesOf are lemma i's senses.
func (l *lexicon) sensesOf(i int) []sense { return l.senses[l.nameSenses[i]:l.nameSenses[i+1]] }

// hyper are synset s's hypernyms.
func (l *lexicon) hyper(s int32) []int32 { return l.rel[l.relOff[2*s]:l.relOff[2*s+1]] }

// near are synset s's near relations.
func (l *lexicon) near(s int32) []int32 { return l.rel[l.relOff[2*s+1]:l.relOff[2*s+2]] }

// known is whether WordNet knows the lemma w.
func (l *lexicon) known(w string) bool {
	_, ok := l.lemma(w)
	return ok
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
	if l.known(w) {
		return w
	}
	if b, ok := l.exceptions[w]; ok {
		if l.known(b) {
			return b
		}
	}
	for _, s := range suffixes {
		if strings.HasSuffix(w, s[0]) && len(w) > len(s[0])+1 {
			b := w[:len(w)-len(s[0])] + s[1]
			if l.known(b) {
				return b
			}
		}
	}
	// a doubled consonant before -ing/-ed: running -> run, planned -> plan
	for _, s := range []string{"ing", "ed"} {
		if strings.HasSuffix(w, s) && len(w) > len(s)+2 {
			stem := w[:len(w)-len(s)]
			if stem[len(stem)-1] == stem[len(stem)-2] {
				if l.known(stem[:len(stem)-1]) {
					return stem[:len(stem)-1]
				}
			}
		}
	}
	return ""
}
