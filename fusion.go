package custody

import (
	"cmp"
	"slices"
)

// Calibrated fusion. A hybrid search fuses three candidate lists (the
// lexical list scored in its context, the semantic list and the lexical
// list of the feedback words) by a linear model over two features of
// each list a record is in: its rank, as reciprocal rank fusion counts
// it, 1/(rrfK + rank), and its score, min-max normalised over the list
// (1 for the list's best, 0 for its last). Rank alone throws away how
// far apart the scores are: a record far ahead of the rest in one list
// and one barely ahead count the same. Score alone is at the mercy of
// each list's scale. The model weighs both:
//
//	fused(r) = Σ over the lists l that hold r of
//	           l.Rank / (rrfK + rank_l(r)) + l.Score × norm_l(score_l(r))
//
// The lexical list's rank weight is fixed at 1 (only the ratios count:
// contiguity and diversity scale with the fused score); the other five
// weights are fitted by coordinate ascent on the LoCoMo measure of one
// development conversation and checked on the other
// (embed/locomo_fit_test.go; docs/benchmarks.md).
type Fusion struct {
	// SemanticRank and FeedbackRank weigh the rank feature of the
	// semantic list and of the feedback words' list (the lexical list's
	// is 1).
	SemanticRank, FeedbackRank float64
	// LexicalScore, SemanticScore and FeedbackScore weigh each list's
	// normalised score.
	LexicalScore, SemanticScore, FeedbackScore float64
}

// Fusion settings: each list's first hybridCandidates are fused, and
// the rank feature is 1/(rrfK + rank).
const (
	rrfK             = 10
	hybridCandidates = 100
)

// defaultFusion is the model in use: the weights of reciprocal rank
// fusion, no score. Fitted on one development conversation, the score
// weights raised that conversation's recall (R@5 0.704 → 0.711, R@10
// 0.803 → 0.809 on one, 0.741 → 0.753 and 0.840 → 0.852 on the other)
// but not the other's: measured across the folds, R@1 / R@5 / R@10 were
// 0.425 / 0.700 / 0.815 against 0.421 / 0.717 / 0.815 for these weights.
// What a fit gains on the data it was fitted on is not kept.
var defaultFusion = Fusion{SemanticRank: 0.5, FeedbackRank: 1}

// fusionIn is the model in use: the constants, or what Options.Ranking
// sets for a measurement.
func (o *Options) fusionIn() Fusion {
	if o.Ranking.Fusion != nil {
		return *o.Ranking.Fusion
	}
	return defaultFusion
}

// rankedList is one candidate list for fusion, with its name and its
// two weights.
type rankedList struct {
	hits        []Ranked
	name        string
	weight      float64 // of the rank feature
	scoreWeight float64 // of the normalised score
}

// lists are the three lists of a hybrid search weighed by f.
func (f Fusion) lists(lex, sem, feedback []Ranked) []rankedList {
	return []rankedList{
		{lex, "lexical", 1, f.LexicalScore},
		{sem, "semantic", f.SemanticRank, f.SemanticScore},
		{feedback, "lexical", f.FeedbackRank, f.FeedbackScore},
	}
}

// candidate is a record a hybrid ranking holds: its id, its score and
// the lists that found it. Its record is read once the ranking is cut to
// the search's limit (readRanked).
type candidate struct {
	ID    string
	Score float64
	Lists []string
}

// fuse merges ranked lists by the linear model above; ties keep the
// order of the first list. Lists of the same name (the lexical list and
// the feedback words' list) are named once.
func fuse(limit int, lists ...rankedList) []candidate {
	type acc struct {
		id    string
		score float64
		names [8]uint8 // the indexes of the names it is listed under, in the order it met them
		n     uint8
	}
	if len(lists) > len(acc{}.names) {
		panic("fuse: more lists than an item can be named by")
	}
	var names []string
	total := 0
	for _, l := range lists {
		total += len(l.hits)
		if !slices.Contains(names, l.name) {
			names = append(names, l.name)
		}
	}
	accs := make([]acc, 0, total)
	at := make(map[string]int, total)
	for _, l := range lists {
		lo, hi := scoreRange(l.hits)
		name := uint8(slices.Index(names, l.name))
		for rank, h := range l.hits {
			i, ok := at[h.ID]
			if !ok {
				i = len(accs)
				at[h.ID] = i
				accs = append(accs, acc{id: h.ID})
			}
			a := &accs[i]
			a.score += l.weight / float64(rrfK+rank+1)
			if l.scoreWeight != 0 {
				norm := 1.0
				if hi > lo {
					norm = (h.Score - lo) / (hi - lo)
				}
				a.score += l.scoreWeight * norm
			}
			if !slices.Contains(a.names[:a.n], name) {
				a.names[a.n], a.n = name, a.n+1
			}
		}
	}
	slices.SortStableFunc(accs, func(a, b acc) int { return cmp.Compare(b.score, a.score) })
	out := make([]candidate, 0, min(limit, len(accs)))
	for _, a := range accs[:min(limit, len(accs))] {
		hit := candidate{ID: a.id, Score: a.score, Lists: make([]string, a.n)}
		for i, name := range a.names[:a.n] {
			hit.Lists[i] = names[name]
		}
		out = append(out, hit)
	}
	return out
}

// scoreRange is the lowest and highest score of hits.
func scoreRange(hits []Ranked) (lo, hi float64) {
	for i, h := range hits {
		if i == 0 || h.Score < lo {
			lo = h.Score
		}
		if i == 0 || h.Score > hi {
			hi = h.Score
		}
	}
	return lo, hi
}

// first moves the item of id to the front of items, the others keeping
// their order.
func first(items []candidate, id string) []candidate {
	for i, h := range items {
		if h.ID == id {
			copy(items[1:i+1], items[:i])
			items[0] = h
			break
		}
	}
	return items
}
