package embed

import (
	"cmp"
	"context"
	"fmt"
	"hash/fnv"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/custody-mem/custody/internal/lexical"
)

// DefaultBuiltinDim is the built-in embedder's vector length.
const DefaultBuiltinDim = 512

// maxDim is the longest vector the built-in embedder makes (a power of
// two: static.go masks indexes with it).
const maxDim = 4096

// builtinVersion changes whenever the built-in embedder's vectors change
// (table, weights, hashing), so that custody reindex --embeddings knows to
// compute them again.
const builtinVersion = "wordnet3.0-ri1"

// Builtin is the offline embedder: random indexing over WordNet 3.0. Each
// word contributes a pseudo-random sparse vector of its own, and, through
// its lemma, one for each of its senses (synsets, weighted by how common
// the sense is) and a weaker one for each sense's hypernyms and near
// relations (similar adjectives, derivations, pertainyms). Synonyms share
// synsets, so "brief replies" and "short answers" share components and
// end up close, while a word WordNet does not know (a name, an
// identifier) still matches itself. Words are weighted by rarity (the
// lemma's count in WordNet's sense-tagged corpus) and common function
// words are left out. Deterministic and safe for concurrent use.
type Builtin struct {
	dim int
	lex *lexicon
	p   builtinParams

	words    *wordCache          // word form -> its vector (word)
	mu       sync.RWMutex        // guards expanded
	expanded map[string][]string // word and n -> Expand(word, n)

	idxOnce sync.Once
	idx     *conceptIndex // expand.go
}

// builtinParams are the weights of the built-in embedder, tuned on the
// LoCoMo development conversations (docs/search.md).
type builtinParams struct {
	word, syn, hyper, near float64 // component weights
	nonzero                int     // nonzeros per pseudo-random vector
	senses                 int     // senses kept per lemma and part of speech
	unknown                float64 // weight of a word WordNet does not know (a name, a number)
}

// Heavier synsets find more paraphrases but rank LoCoMo a little worse;
// these weights keep "brief replies" near "short answers" at the least
// cost there. Weighting words by rarity (their SemCor counts, or how many WordNet
// glosses use them) lowered recall there, and so did leaving out numbers.
var defaultParams = builtinParams{word: 1, syn: 1, hyper: 0.3, near: 0.3, nonzero: 8, senses: 4, unknown: 0.5}

// NewBuiltin returns the built-in embedder with vectors of dim floats
// (0: DefaultBuiltinDim).
func NewBuiltin(dim int) (*Builtin, error) {
	if dim == 0 {
		dim = DefaultBuiltinDim
	}
	if dim < 32 || dim > maxDim {
		return nil, fmt.Errorf("builtin embedder: dimension %d is out of range: use 32 to %d", dim, maxDim)
	}
	l, err := loadLexicon()
	if err != nil {
		return nil, err
	}
	return &Builtin{dim: dim, lex: l, p: defaultParams, words: newWordCache(wordCacheComponents), expanded: map[string][]string{}}, nil
}

// Model is "builtin-" and the version of the table and weights, and the
// dimension.
func (b *Builtin) Model() string { return fmt.Sprintf("builtin-%s-%d", builtinVersion, b.dim) }

// Dim is the vector length.
func (b *Builtin) Dim() int { return b.dim }

// Embed computes the vectors of texts; it never fails but for a cancelled
// context.
func (b *Builtin) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		out[i] = b.vector(t)
	}
	return out, nil
}

var tokenRE = regexp.MustCompile(`[\p{L}\p{N}]+`)

// maxTokens bounds the words of one text that count.
const maxTokens = 2048

// Terms are the words of text that are not function words, in order,
// each once, as the search index reads a query: an identifier
// (ACCT-7777, bob@example.com) is one term, kept whole, so that it
// matches itself only (Scorer).
func (b *Builtin) Terms(text string) []string {
	var out []string
	n := 0
	lexical.EachWord(text, false, func(w string) {
		if n++; n <= maxTokens && !stopwords[w] && !slices.Contains(out, w) {
			out = append(out, w)
		}
	})
	return out
}

func (b *Builtin) vector(text string) []float32 {
	v := make([]float32, b.dim)
	for _, t := range tokenRE.FindAllString(strings.ToLower(text), maxTokens) {
		if stopwords[t] {
			continue
		}
		for _, c := range b.word(t) {
			v[c.i] += c.w
		}
	}
	normalize(v)
	return v
}

// component is one nonzero of a word's vector.
type component struct {
	i int32
	w float32
}

// maxCachedWords bounds the word expansions kept (Expand).
const maxCachedWords = 50000

// word is the sparse vector of one word form, cached (wordCache).
func (b *Builtin) word(t string) []component {
	if c, ok := b.words.get([]byte(t)); ok {
		return c
	}
	c, _ := b.computeWord(t)
	return c
}

// computeWord computes the sparse vector of word form t, and caches it
// if WordNet knows the word (known). A word it does not know (a name, a
// number, an identifier) has its own vector alone, computed again each
// time from its hash: cached, the words of a body erased since would
// stay in memory until the cache's generations turned.
func (b *Builtin) computeWord(t string) (c []component, known bool) {
	base := b.lex.base(t)
	key := t
	if base != "" {
		key = base
	}
	lm, known := b.lex.lemma(base)
	if !known {
		return b.unknownWord(wordSeed(key)), false
	}
	dense := densePool.Get().(*[maxDim]float32)
	b.wordVector(dense[:b.dim], key, lm)
	for i, x := range dense[:b.dim] {
		if x != 0 {
			c = append(c, component{int32(i), x})
			dense[i] = 0
		}
	}
	densePool.Put(dense)
	b.words.put(t, c)
	return c, true
}

// unknownWord is the vector of a word WordNet does not know, whose seed
// is seed: as add would sum it into a vector of zeros, by index.
func (b *Builtin) unknownWord(seed uint64) []component {
	w := float32(b.p.unknown * b.p.word)
	c := make([]component, 0, b.p.nonzero)
	x := seed
	for range b.p.nonzero {
		x = splitmix(x)
		i := int32((x >> 1) % uint64(b.dim))
		d := w
		if x&1 != 0 {
			d = -w
		}
		k := slices.IndexFunc(c, func(y component) bool { return y.i == i })
		if k < 0 {
			c = append(c, component{i, d})
		} else {
			c[k].w += d
		}
	}
	c = slices.DeleteFunc(c, func(y component) bool { return y.w == 0 })
	slices.SortFunc(c, func(a, b component) int { return cmp.Compare(a.i, b.i) })
	return c
}

// densePool holds zeroed arrays a word's vector is summed in.
var densePool = sync.Pool{New: func() any { return new([maxDim]float32) }}

// wordVector adds the vector of a word WordNet knows to v: its own (key,
// the form it is known by), and its lemma lm's senses with their related
// synsets.
func (b *Builtin) wordVector(v []float32, key string, lm int) {
	b.add(v, wordSeed(key), b.p.word)
	senses := b.lex.sensesOf(lm)
	var total float64
	for _, s := range senses {
		if int(s.rank) < b.p.senses {
			total += 1 / float64(1+int(s.rank))
		}
	}
	for _, s := range senses {
		if int(s.rank) >= b.p.senses {
			continue
		}
		ws := 1 / float64(1+int(s.rank)) / total
		b.add(v, synSeed(s.syn), ws*b.p.syn)
		for _, h := range b.lex.hyper(s.syn) {
			b.add(v, synSeed(h), ws*b.p.hyper)
		}
		for _, n := range b.lex.near(s.syn) {
			b.add(v, synSeed(n), ws*b.p.near)
		}
	}
}

// add adds w times the pseudo-random sparse ternary vector of seed to v.
func (b *Builtin) add(v []float32, seed uint64, w float64) {
	x := seed
	for range b.p.nonzero {
		x = splitmix(x)
		i := int((x >> 1) % uint64(b.dim))
		if x&1 == 0 {
			v[i] += float32(w)
		} else {
			v[i] -= float32(w)
		}
	}
}

func wordSeed(w string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(w))
	return h.Sum64()
}

func synSeed(s int32) uint64 { return splitmix(uint64(s) ^ 0x5bd1e9955bd1e995) }

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// stopwords are common English function words, which carry no topic.
var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above after again against all am an and any are as at be because been
 before being below between both but by can could did do does doing down during each few for from further had has
 have having he her here hers herself him himself his how i if in into is it its itself just me more most my myself
 no nor not now of off on once only or other our ours ourselves out over own same she should so some such than that
 the their theirs them themselves then there these they this those through to too under until up very was we were
 what when where which while who whom why will with would you your yours yourself yourselves s t d ll m re ve
 also yeah oh really like get got go going gonna just lot much many thing things something anything ever one`) {
		m[w] = true
	}
	return m
}()
