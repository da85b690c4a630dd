package embed

import (
	"slices"
	"sort"
	"strconv"
	"sync"
)

// Expander is implemented by an embedder whose similarities arise only
// from shared, enumerable features (Builtin: WordNet synsets and the word
// itself). For each query word it can list the words whose vectors share
// weight with the word's, so a semantic search can take its candidates
// from a word index instead of scanning every vector: a record whose words
// are all outside the expansion shares nothing with the query but the
// noise of random indexing.
type Expander interface {
	// Expand is word and the words that share a feature with it, most
	// shared weight first, at most n of them (word first). The caller
	// reads the slice and never writes it: it may be shared.
	Expand(word string, n int) []string
}

// conceptIndex maps each synset to the lemmas whose vectors carry it,
// with the weight they carry it with: the reverse of wordVector's
// synset components, built once on first use. Synset s's postings are
// post[off[s]:off[s+1]], in lemma order.
type conceptIndex struct {
	off   []uint32
	post  []posting
	forms map[string][]string // lemma -> its irregular forms
}

type posting struct {
	lemma int32
	w     float32
}

// bySyn are the postings of synset s.
func (ix *conceptIndex) bySyn(s int32) []posting {
	if int(s)+1 >= len(ix.off) {
		return nil
	}
	return ix.post[ix.off[s]:ix.off[s+1]]
}

// concepts is the synset part of the vector of a known lemma: each synset
// of its first senses, hypernyms and near relations, with its weight (as
// wordVector adds them).
func (b *Builtin) concepts(base string) map[int32]float64 {
	lm, ok := b.lex.lemma(base)
	if !ok {
		return nil
	}
	senses := b.lex.sensesOf(lm)
	var total float64
	for _, s := range senses {
		if int(s.rank) < b.p.senses {
			total += 1 / float64(1+int(s.rank))
		}
	}
	out := map[int32]float64{}
	for _, s := range senses {
		if int(s.rank) >= b.p.senses {
			continue
		}
		ws := 1 / float64(1+int(s.rank)) / total
		out[s.syn] += ws * b.p.syn
		for _, h := range b.lex.hyper(s.syn) {
			out[h] += ws * b.p.hyper
		}
		for _, n := range b.lex.near(s.syn) {
			out[n] += ws * b.p.near
		}
	}
	return out
}

// indexes are the concept indexes built, one per set of weights (every
// Builtin of the same weights shares one: building takes a few hundred
// milliseconds and some MB).
var (
	indexMu sync.Mutex
	indexes = map[builtinParams]*conceptIndex{}
)

func (b *Builtin) index() *conceptIndex {
	b.idxOnce.Do(func() {
		indexMu.Lock()
		defer indexMu.Unlock()
		if ix := indexes[b.p]; ix != nil {
			b.idx = ix
			return
		}
		// Two passes over the lemmas (in name order, so postings of equal
		// weight keep a fixed order): count each synset's postings, then
		// place them.
		nsyn := (len(b.lex.relOff) - 1) / 2
		ix := &conceptIndex{off: make([]uint32, nsyn+1), forms: map[string][]string{}}
		n := b.lex.lemmaCount()
		for i := range n {
			for syn := range b.concepts(b.lex.name(i)) {
				ix.off[syn+1]++
			}
		}
		for s := range nsyn {
			ix.off[s+1] += ix.off[s]
		}
		ix.post = make([]posting, ix.off[nsyn])
		next := slices.Clone(ix.off[:nsyn])
		for i := range n {
			for syn, w := range b.concepts(b.lex.name(i)) {
				ix.post[next[syn]] = posting{int32(i), float32(w)}
				next[syn]++
			}
		}
		for form, base := range b.lex.exceptions {
			ix.forms[base] = append(ix.forms[base], form)
		}
		for _, f := range ix.forms {
			sort.Strings(f)
		}
		indexes[b.p] = ix
		b.idx = ix
	})
	return b.idx
}

// Expand is word and the lemmas sharing a synset component with its
// vector, by the weight they share (the dot product of the two vectors'
// synset parts), and the irregular forms of those lemmas (ran for run),
// at most n words in all. A word WordNet does not know (a name, a number)
// is only itself. The slice is cached and shared by every caller, which
// must not write it.
func (b *Builtin) Expand(word string, n int) []string {
	if n <= 0 {
		return nil
	}
	key := word + "\x00" + strconv.Itoa(n)
	b.mu.RLock()
	out, ok := b.expanded[key]
	b.mu.RUnlock()
	if ok {
		return out
	}
	out = b.expand(word, n)
	b.mu.Lock()
	if len(b.expanded) < maxCachedWords {
		b.expanded[key] = out
	}
	b.mu.Unlock()
	return out
}

func (b *Builtin) expand(word string, n int) []string {
	out := []string{word}
	base := b.lex.base(word)
	if base == "" {
		return out
	}
	ix := b.index()
	shared := map[int32]float64{}
	for syn, w := range b.concepts(base) {
		for _, p := range ix.bySyn(syn) {
			shared[p.lemma] += w * float64(p.w)
		}
	}
	lemmas := make([]int32, 0, len(shared))
	for l := range shared {
		lemmas = append(lemmas, l)
	}
	sort.Slice(lemmas, func(i, j int) bool {
		if shared[lemmas[i]] != shared[lemmas[j]] {
			return shared[lemmas[i]] > shared[lemmas[j]]
		}
		return lemmas[i] < lemmas[j]
	})
	seen := map[string]bool{word: true}
	add := func(w string) {
		// a lemma of several words (short-lived) is never one word of a text
		if len(out) < n && !seen[w] && tokenRE.FindString(w) == w {
			seen[w] = true
			out = append(out, w)
		}
	}
	add(base)
	for _, f := range ix.forms[base] {
		add(f)
	}
	for _, l := range lemmas {
		name := b.lex.name(int(l))
		add(name)
		for _, f := range ix.forms[name] {
			add(f)
		}
	}
	return out
}
