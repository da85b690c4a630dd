package embed

import (
	"context"
	"slices"
	"sync"

	"github.com/custody-mem/custody/internal/lexical"
)

// gloveVersion changes whenever the glove embedder's table or scoring
// changes.
const gloveVersion = "glove6b-pc64-50k-ws1"

// Glove is the offline embedder of GloVe word vectors (glove.gz: the
// 50,000 most frequent a-z words, 64 dimensions as int8). Its search
// signal is word-level: a record is scored against a query by each query
// word's most similar word in the record (wordScorer), not by one vector
// per text, so one apt word in a long record counts fully. Its
// candidates are found as the built-in embedder's are: the records
// holding a query word or a WordNet relative of one (Expand).
// Deterministic and safe for concurrent use.
type Glove struct {
	wv *wordVectors
	wn *Builtin // WordNet: the expansion that finds the candidates
	p  wordParams
	// near is how many of a query word's nearest GloVe neighbours join
	// its WordNet relatives among the words that find candidates.
	near int

	mu     sync.Mutex
	nearby map[string][]string // word -> its nearest neighbours
}

// DefaultGloveNeighbours is how many nearest neighbours of each query
// word find candidates beside its WordNet relatives.
const DefaultGloveNeighbours = 8

// NewGlove loads the table (and WordNet's, for candidates).
func NewGlove() (*Glove, error) {
	wv, err := loadWordVectors()
	if err != nil {
		return nil, err
	}
	wn, err := NewBuiltin(0)
	if err != nil {
		return nil, err
	}
	return &Glove{wv: wv, wn: wn, p: defaultWordParams, near: DefaultGloveNeighbours, nearby: map[string][]string{}}, nil
}

// Model is "glove-" and the version of the table and scoring.
func (g *Glove) Model() string { return "glove-" + gloveVersion }

// Dim is the table's vector length.
func (g *Glove) Dim() int { return g.wv.dim }

// Embed computes each text's mean word vector (unit length; zero for a
// text without a word the table holds): what a store of vectors gets
// from this embedder. Search does not use it: it scores candidates word
// by word from their texts (Scorer).
func (g *Glove) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		v := make([]float32, g.wv.dim)
		lexical.EachWord(t, false, func(form string) {
			if stopwords[form] {
				return
			}
			if r := g.wv.Row(form); r >= 0 {
				d := g.wv.dim
				k := g.wv.norms[r]
				for j, x := range g.wv.vecs[int(r)*d : int(r+1)*d] {
					v[j] += float32(x) * k
				}
			}
		})
		normalize(v)
		out[i] = v
	}
	return out, nil
}

// Terms are the words of text that are not function words, in order,
// each once (identifiers whole).
func (g *Glove) Terms(text string) []string {
	var out []string
	seen := map[string]bool{}
	lexical.EachWord(text, false, func(form string) {
		if !seen[form] && wordTerm(form) != "" {
			seen[form] = true
			out = append(out, form)
		}
	})
	return out
}

// Expand is word, its WordNet relatives (as the built-in embedder's
// Expand) and its nearest GloVe neighbours, at most n words in all: the
// words whose records are the candidates for word.
func (g *Glove) Expand(word string, n int) []string {
	nb := g.neighbours(word)
	k := min(len(nb), n/2)
	relatives := g.wn.Expand(word, n) // shared with every caller: read, never written
	out := make([]string, 0, max(n, 1))
	out = append(out, relatives[:min(len(relatives), n-k)]...)
	for _, w := range nb {
		if len(out) == n {
			break
		}
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// neighbours are word's g.near nearest neighbours in the table, computed
// once (a scan of the table, about a millisecond).
func (g *Glove) neighbours(word string) []string {
	if g.near <= 0 {
		return nil
	}
	g.mu.Lock()
	nb, ok := g.nearby[word]
	g.mu.Unlock()
	if ok {
		return nb
	}
	if row := g.wv.Row(word); row >= 0 {
		nb = g.wv.neighbours(row, g.near, g.p.floor)
	}
	g.mu.Lock()
	if len(g.nearby) < maxCachedWords {
		g.nearby[word] = nb
	}
	g.mu.Unlock()
	return nb
}

// GloveScorer scores candidate records against one query by their words
// (wordScorer). For one goroutine.
type GloveScorer struct {
	ws  *wordScorer
	got *scoredRecords // from scoredPool, once a record scores
}

// scoredRecords are the records a scorer scored above zero; Top hands
// them on empty (and clear: an id may view a store's kept texts) to the
// next query's scorer.
type scoredRecords struct {
	ids    []string
	scores []float32
}

var scoredPool sync.Pool // *scoredRecords

// add notes a record scored sc.
func (s *GloveScorer) add(id string, sc float32) {
	if sc <= 0 {
		return
	}
	if s.got == nil {
		if s.got, _ = scoredPool.Get().(*scoredRecords); s.got == nil {
			s.got = &scoredRecords{ids: make([]string, 0, 512), scores: make([]float32, 0, 512)}
		}
	}
	s.got.ids = append(s.got.ids, id)
	s.got.scores = append(s.got.scores, sc)
}

var _ Static = (*Glove)(nil)

// Scorer is a GloveScorer for query: Glove is static (Static), so its
// records' vectors are never stored and a search scores its candidates'
// texts with this.
func (g *Glove) Scorer(query string) TextScorer {
	return &GloveScorer{ws: g.wv.scorer(query, g.p)}
}

// Add scores one record by its key and body (a JSON body's values, as the
// search index reads it: lexical.Values).
func (s *GloveScorer) Add(id, key, body string) { s.add(id, s.ws.score(key, body)) }

// Corpus does nothing: a query word's rarity is its frequency rank in the
// table's corpus, the same whatever records a caller may see.
func (s *GloveScorer) Corpus(int) {}

// Top is the k best records added with a positive score, best first, with
// their scores. The scorer's memory of words goes to the next query's.
func (s *GloveScorer) Top(k int) ([]string, []float32) {
	s.ws.release()
	if s.got == nil {
		return nil, nil
	}
	top := NewNearest[int](k)
	for i, sc := range s.got.scores {
		top.Offer(i, sc)
	}
	ids, scores := ranked(top, s.got.ids)
	clear(s.got.ids)
	s.got.ids, s.got.scores = s.got.ids[:0], s.got.scores[:0]
	scoredPool.Put(s.got)
	s.got = nil
	return ids, scores
}
