package custody

import (
	"context"
	"errors"

	"github.com/custody-mem/custody/embed"
	"github.com/custody-mem/custody/internal/lexical"
)

// Where the semantic list's candidates come from (docs/search.md, "Cost,
// and where exact search stops"):
//
//   - For an embedder whose similarities arise only from enumerable
//     features (embed.Expander: the built-in one), the candidates are the
//     eligible records whose body or key holds a query word or a word
//     sharing a feature with it, found by the lexical index and re-ranked
//     by vector. Every other record shares nothing with the query but the
//     noise of random indexing, so nothing is lost but that noise, and
//     the cost follows the query words' matches, not the subject's size.
//   - For any other embedder (openai), the eligible records' vectors are
//     scanned exactly while there are at most exactScanMax of them;
//     beyond, the candidates are the eligible records holding one of the
//     query's own lexical terms, re-ranked by vector: where an ANN index
//     would take over.
//
// A static embedder (embed.Static: the built-in one) stores no vectors:
// its candidates, found as above, are scored from their texts as the
// store reads them (staticList).
//
// Eligibility and filters are inside every candidate query, before its
// LIMIT.
const (
	// semanticCandidates bounds the candidates re-ranked by vector.
	semanticCandidates = 400
	// staticCandidates bounds the candidates a static embedder scores
	// from their texts: each is read and scored word by word, most of a
	// hybrid search's cost. On the LoCoMo development conversations both
	// folds choose 400 with glove (fold 30 scores 300 the same), and with
	// builtin fold 26 chooses 300 (fold 30 scores 300 and 400 the same);
	// 200 loses a question at R@5 on each fold and takes 18% less CPU a
	// hybrid search at 100k records, 300 no less than 400 there
	// (docs/benchmarks-history.md).
	staticCandidates = 400
	// expandPerWord bounds the words one query word is expanded into.
	expandPerWord = 24
	// maxMatchTerms bounds the lexical terms of one candidate query.
	maxMatchTerms = 384
	// exactScanMax bounds the vectors an exact scan reads.
	exactScanMax = 5000
)

// ScanBounder is implemented by an embedder that bounds the exact scan of
// its vectors otherwise than exactScanMax does (0: the default).
type ScanBounder interface {
	ExactScanMax() int
}

// semanticList is the semantic candidate list of q (terms are the
// query's vectors, as embedQuery made them).
func (s *Service) semanticList(ctx context.Context, vs VectorStore, e embed.Embedder, sc Scope, q SearchQuery, text string, terms [][]float32) ([]Ranked, error) {
	if st, ok := e.(embed.Static); ok {
		return staticList(ctx, vs, st, sc, q, text, s.opts.staticCandidatesIn())
	}
	if x, ok := e.(embed.Expander); ok {
		return vs.VectorCandidates(ctx, sc, q, e.Model(), terms, expandedTerms(x, e, text), semanticCandidates)
	}
	bound := exactScanMax
	if b, ok := e.(ScanBounder); ok && b.ExactScanMax() > 0 {
		bound = b.ExactScanMax()
	}
	hits, err := vs.VectorSearch(ctx, sc, q, e.Model(), terms, bound)
	if !errors.Is(err, ErrScanBound) {
		return hits, err
	}
	return vs.VectorCandidates(ctx, sc, q, e.Model(), terms, lexical.Query(text, maxQueryTerms), semanticCandidates)
}

// expandedTerms are the lexical terms of the query's words and of the
// words sharing a feature with each, the query's own first.
func expandedTerms(x embed.Expander, e embed.Embedder, text string) []string {
	var words []string
	if t, ok := e.(embed.Termer); ok {
		words = t.Terms(text)
	}
	words = words[:min(len(words), maxQueryTerms)]
	seen := map[string]bool{}
	var out []string
	add := func(w string) {
		for _, t := range lexical.Query(w, -1) {
			if !seen[t] && len(out) < maxMatchTerms {
				seen[t] = true
				out = append(out, t)
			}
		}
	}
	for _, w := range words {
		add(w)
	}
	per := expandPerWord
	if len(words) > 0 {
		per = max(4, min(expandPerWord, maxMatchTerms/len(words)))
	}
	for _, w := range words {
		for _, v := range x.Expand(w, per)[1:] {
			add(v)
		}
	}
	return out
}

// staticCandidatesIn is the static embedder's candidates in use: the
// constant, or what Options.Ranking sets for a measurement.
func (o *Options) staticCandidatesIn() int {
	if o.Ranking.StaticCandidates > 0 {
		return o.Ranking.StaticCandidates
	}
	return staticCandidates
}

// staticList is the semantic list of a static embedder: the first
// candidates (best BM25 first) of the records the lexical index finds
// (as for the Expander path above, or the query's own terms), scored
// from their key and body values by the embedder's TextScorer, or from
// the forms it derived from them before when the store kept those
// (embed.FormScorer). No vector is read or stored.
func staticList(ctx context.Context, vs VectorStore, e embed.Static, sc Scope, q SearchQuery, text string, candidates int) ([]Ranked, error) {
	if q.Limit <= 0 {
		return nil, nil
	}
	match := lexical.Query(text, maxQueryTerms)
	if x, ok := e.(embed.Expander); ok {
		match = expandedTerms(x, e, text)
	}
	scorer := e.Scorer(text)
	fs, _ := scorer.(embed.FormScorer)
	corpus, err := vs.CandidateTexts(ctx, sc, q, match, candidates, func(c *CandidateText) {
		switch {
		case c.Form != nil && fs != nil && fs.AddForm(c.ID, c.Form):
		case c.Partial:
			c.Form = nil // not this scorer's: it is given the text next
		case fs == nil:
			scorer.Add(c.ID, c.Key, lexical.Values(c.Body))
		default:
			c.Form = fs.Form(c.Key, lexical.Values(c.Body))
			fs.AddForm(c.ID, c.Form)
		}
	})
	if err != nil {
		return nil, err
	}
	scorer.Corpus(corpus)
	ids, scores := scorer.Top(q.Limit)
	out := make([]Ranked, len(ids))
	for i, id := range ids {
		out[i] = Ranked{ID: id, Score: float64(scores[i])}
	}
	return out, nil
}
