package custody

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/custody-mem/custody/embed"
)

// SearchMode is how a search ranks: by its words (lexical, BM25), by
// meaning (semantic, the cosine similarity of embeddings), or both fused
// (hybrid).
type SearchMode string

// Search modes.
const (
	ModeLexical  SearchMode = "lexical"
	ModeSemantic SearchMode = "semantic"
	ModeHybrid   SearchMode = "hybrid"
)

// ParseSearchMode checks a mode ("" is the default).
func ParseSearchMode(s string) (SearchMode, error) {
	switch m := SearchMode(s); m {
	case "", ModeLexical, ModeSemantic, ModeHybrid:
		return m, nil
	}
	return "", invalid("mode", "search mode %q is not known: use lexical, semantic or hybrid", s)
}

// SearchResult is a ranked search: the items, the mode that ranked them,
// and, when a semantic or hybrid search fell back to lexical ranking, why.
type SearchResult struct {
	Items    []Scored   `json:"items"`
	Mode     SearchMode `json:"mode"`
	Fallback string     `json:"fallback,omitempty"`
}

// Fusion settings, measured on the LoCoMo development conversations
// (docs/benchmarks.md): each list contributes 1/(rrfK + rank) to a
// record's score (reciprocal rank fusion), over the first
// hybridCandidates of each list.
const (
	rrfK             = 10
	hybridCandidates = 100
	// queryEmbedTimeout bounds embedding the query; past it the search
	// is lexical.
	queryEmbedTimeout = 2 * time.Second
)

// SearchRanked is Search in any mode. Each item says which lists found
// it. Semantic and hybrid search need an embedder; without one, or when
// it fails on the query, the search is lexical and Fallback says why.
// Eligibility is inside each list's query (rule 4): the semantic list
// ranks only records eligible for the subject, so a nearer ineligible
// record neither shows nor pushes an eligible one out.
func (s *Service) SearchRanked(ctx context.Context, c *Caller, in SearchInput) (*SearchResult, error) {
	mode, err := ParseSearchMode(string(in.Mode))
	if err != nil {
		return nil, err
	}
	q, err := s.searchQuery(c, in)
	if err != nil {
		return nil, err
	}
	vs, e, verr := s.vectorStore()
	if mode == "" {
		mode = ModeHybrid
		if verr != nil {
			mode = ModeLexical
		}
	}
	scope := c.scope(s.now())
	res := &SearchResult{Items: []Scored{}, Mode: mode}
	var terms [][]float32
	if mode != ModeLexical {
		if verr == nil {
			terms, verr = s.embedQuery(ctx, e, in.Query)
		}
		if verr != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			res.Mode, res.Fallback = ModeLexical, "embedder unavailable: "+verr.Error()
		}
	}
	var lex, sem []Scored
	if res.Mode != ModeSemantic {
		lq := q
		if res.Mode == ModeHybrid {
			lq.Limit = hybridCandidates
		}
		if lex, err = s.store.Search(ctx, scope, lq); err != nil {
			return nil, err
		}
	}
	if res.Mode != ModeLexical {
		sq := q
		if res.Mode == ModeHybrid {
			sq.Limit = hybridCandidates
		}
		if sem, err = s.semanticList(ctx, vs, e, scope, sq, in.Query, terms); err != nil {
			return nil, err
		}
	}
	switch res.Mode {
	case ModeLexical:
		res.Items = labelled(lex, "lexical")
	case ModeSemantic:
		res.Items = labelled(sem, "semantic")
	default:
		res.Items = fuse(q.Limit, labelled(lex, "lexical"), labelled(sem, "semantic"))
	}
	return res, nil
}

// embedQuery is the query's vector, or, for an embedder whose vectors
// sum word vectors, the vectors of its words (embed.TermScorer).
func (s *Service) embedQuery(ctx context.Context, e embed.Embedder, text string) ([][]float32, error) {
	ctx, cancel := context.WithTimeout(ctx, queryEmbedTimeout)
	defer cancel()
	texts := []string{text}
	if t, ok := e.(embed.Termer); ok {
		if terms := t.Terms(text); len(terms) > 0 {
			texts = terms[:min(len(terms), maxQueryTerms)]
		}
	}
	vs, err := e.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	if len(vs) != len(texts) {
		return nil, fmt.Errorf("the embedder returned %d vectors for %d texts", len(vs), len(texts))
	}
	return vs, nil
}

// maxQueryTerms bounds the words of a query scored one by one.
const maxQueryTerms = 32

func labelled(hits []Scored, list string) []Scored {
	out := make([]Scored, 0, len(hits))
	for _, h := range hits {
		h.Lists = []string{list}
		out = append(out, h)
	}
	return out
}

// fuse merges ranked lists by reciprocal rank fusion: a record's score is
// the sum over the lists that found it of 1/(rrfK + its rank there); ties
// keep the order of the first list.
func fuse(limit int, lists ...[]Scored) []Scored {
	type acc struct {
		hit   Scored
		score float64
	}
	byID := map[string]*acc{}
	var order []*acc
	for _, l := range lists {
		for rank, h := range l {
			a := byID[h.ID]
			if a == nil {
				a = &acc{hit: h}
				a.hit.Lists = nil
				byID[h.ID] = a
				order = append(order, a)
			}
			a.score += 1 / float64(rrfK+rank+1)
			a.hit.Lists = append(a.hit.Lists, h.Lists...)
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return order[i].score > order[j].score })
	out := make([]Scored, 0, min(limit, len(order)))
	for _, a := range order[:min(limit, len(order))] {
		a.hit.Score = a.score
		out = append(out, a.hit)
	}
	return out
}
