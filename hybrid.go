package custody

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
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

// queryEmbedTimeout bounds embedding the query; past it the search is
// lexical.
const queryEmbedTimeout = 2 * time.Second

// RankingSteps switches steps of hybrid ranking off (Options.Ranking),
// each named after what it leaves out, and sets the settings that the
// LoCoMo measure tunes on one fold and reports on the other (zero: the
// constant in use).
type RankingSteps struct {
	NoFeedback   bool // the lexical list of the feedback words (feedback.go)
	NoContext    bool // the episode after a match (contiguity.go)
	NoSemantic   bool // the semantic list: hybrid is then the lexical lists alone
	NoNeighbours bool // the words of an episode's neighbours (neighbours.go)
	NoSession    bool // the relevance of an episode's session (neighbours.go)
	NoDiversity  bool // the cap of one session's episodes in the first results (diversify.go)

	Fusion           *Fusion // defaultFusion (fusion.go)
	StaticCandidates int     // staticCandidates (semantic_list.go)
	ContextShare     float64 // contextShare
	NeighbourShare   float64 // neighbourShare
	SessionShare     float64 // sessionShare
	SessionDecay     float64 // sessionDecay
}

// SearchRanked is Search in any mode. Each item says which lists found
// it. Semantic and hybrid search need an embedder; without one, or when
// it fails on the query, the search is lexical and Fallback says why.
// Eligibility is inside each list's query (rule 4): the semantic list
// ranks only records eligible for the subject, so a nearer ineligible
// record neither shows nor pushes an eligible one out. A hybrid search
// also fuses the lexical list of the rare words of its first lexical
// matches (feedback.go), taken only from records the subject may
// retrieve, and recalls an episode with the eligible one written after it
// (contiguity.go).
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
		if verr == nil && storesVectors(e) { // a static embedder scores the query's text itself
			terms, verr = s.embedQuery(ctx, e, in.Query)
		}
		if verr != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			res.Mode, res.Fallback = ModeLexical, "embedder unavailable: "+verr.Error()
		}
	}
	if res.Mode == ModeLexical {
		lex, err := s.store.Search(ctx, scope, q)
		if err != nil {
			return nil, err
		}
		res.Items = labelled(lex, "lexical")
		return res, nil
	}
	// The candidate lists are ranks (ids and scores); only the records
	// of the fused list, cut to its limit, are read.
	// In hybrid mode the two lists are made at once, on two of the
	// store's read connections.
	// The lexical list's feedback (feedback.go) follows it on the same
	// connection while the semantic list is made.
	// The lexical list is then scored with its episodes' neighbours and
	// sessions (neighbours.go).
	var lex, sem, expanded []Ranked
	var lc lexContext
	var lexErr error
	lq, sq := q, q
	var wg sync.WaitGroup
	if res.Mode == ModeHybrid {
		lq.Limit, sq.Limit = hybridCandidates, hybridCandidates
		wg.Go(func() {
			if lex, lexErr = vs.LexicalRanks(ctx, scope, lq); lexErr == nil && !s.opts.Ranking.NoFeedback {
				expanded, lexErr = s.feedbackList(ctx, vs, scope, lq, lex)
			}
			if lexErr == nil && !(s.opts.Ranking.NoNeighbours && s.opts.Ranking.NoSession) {
				lex, lc, lexErr = s.inContext(ctx, scope, lq, lex)
			}
		})
	}
	if res.Mode == ModeSemantic || !s.opts.Ranking.NoSemantic {
		sem, err = s.semanticList(ctx, vs, e, scope, sq, in.Query, terms)
	}
	wg.Wait()
	if err = errors.Join(err, lexErr); err != nil {
		return nil, err
	}
	var fused []candidate
	if res.Mode == ModeSemantic {
		fused = fuse(q.Limit, rankedList{sem, "semantic", 1, 0})
		for i := range fused {
			fused[i].Score = sem[i].Score // the similarity, not its rank
		}
	} else {
		lists := s.opts.fusionIn().lists(lex, sem, expanded)
		all := fuse(3*hybridCandidates, lists...)
		if len(expanded) > 0 {
			// The best direct match stays first: feedback adds what the
			// first matches imply, below them.
			best := fuse(1, lists[:2]...)
			all = first(all, best[0].ID)
		}
		for i, h := range all {
			if lc.joined[h.ID] && !slices.ContainsFunc(expanded, func(r Ranked) bool { return r.ID == h.ID }) {
				all[i].Lists = slices.Clone(h.Lists)
				all[i].Lists[slices.Index(h.Lists, "lexical")] = "context"
			}
		}
		if !s.opts.Ranking.NoContext {
			if all, err = withContext(ctx, s.store, scope, q, all, s.opts.contextShareIn()); err != nil {
				return nil, err
			}
		}
		if all, err = s.diversified(ctx, scope, q, all, lc.sessions, q.Limit); err != nil {
			return nil, err
		}
		fused = all[:min(len(all), q.Limit)]
	}
	if res.Items, err = s.readRanked(ctx, vs, scope, q, fused); err != nil {
		return nil, err
	}
	return res, nil
}

// readRanked reads the records of a fused list, in its order; a record
// that ceased to be eligible since its list was made is left out.
func (s *Service) readRanked(ctx context.Context, vs VectorStore, sc Scope, q SearchQuery, hits []candidate) ([]Scored, error) {
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	recs, err := vs.RankedRecords(ctx, sc, q, ids)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]*Record, len(recs))
	for _, r := range recs {
		byID[r.ID] = r
	}
	out := make([]Scored, 0, len(hits))
	for _, h := range hits {
		if r := byID[h.ID]; r != nil {
			out = append(out, Scored{Record: r, Score: h.Score, Lists: h.Lists})
		}
	}
	return out, nil
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
