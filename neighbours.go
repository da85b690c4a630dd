package custody

import (
	"context"
	"sort"
)

// The context the evidence lives in. A turn of a conversation often
// means what it means through the turns around it ("yes, last week" is
// found through the question before it) and through its session (the
// conversation it was said in). A hybrid search scores each episode of
// its lexical list with the words of its neighbours and of its session,
// before fusion:
//
//	score(t) = bm25(t) + neighbourShare × (bm25(t−1) + bm25(t+1))
//	                   + sessionShare × bm25(first) × session(t)
//
// where t−1 and t+1 are the episodes written just before and after t in
// its namespace and session that the caller may retrieve, bm25 is a
// record's score in the lexical list (0 when it is not in it: a
// neighbour outside the list joins it with its neighbours' share), and
// session(t) is the relevance of t's session: the sum of the lexical
// scores of its episodes in the list, relative to the most relevant
// session's (1 for the best session). Both shares are relative to the
// lexical scores themselves, so the same shares hold for any store and
// any query. The lexical list holds only records the caller may
// retrieve, scored with word statistics of what the caller may see, and
// the neighbour walk is eligibility-filtered inside its query: a
// neighbour or a session turn the caller cannot see never contributes.
// Settings, tuned on one LoCoMo development conversation and measured on
// the other (docs/benchmarks.md):
const (
	// neighbourShare is the share of an episode's lexical score that
	// each of its two neighbours gains.
	neighbourShare = 0.2
	// sessionShare is how much of the first lexical score an episode of
	// the most relevant session gains.
	sessionShare = 0.3
)

// Neighbours are the episodes written just before and after an episode,
// of the same owner, namespace and session, that the caller may
// retrieve ("" for none), and the episode's session ("" for none).
type Neighbours struct {
	Prev, Next, Session string
}

// Neighbourer is implemented by a store that can find the neighbours of
// a set of episodes.
type Neighbourer interface {
	// Neighbours maps each of ids that is an episode of s's subject (an
	// episode it owns) to its neighbours: the last episode before it and
	// the first after it (in id order, which is write order) of the same
	// tenant, owner, namespace and session that is eligible for s and
	// passes q's filters, inside the query, and its session. An id that
	// is no such episode is left out.
	Neighbours(ctx context.Context, s Scope, q SearchQuery, ids []string) (map[string]Neighbours, error)
}

// contextSettings are the shares in use: the constants, or what
// Options.Ranking sets for a measurement.
func (o *Options) contextSettings() (neighbour, session float64) {
	neighbour, session = neighbourShare, sessionShare
	if o.Ranking.NeighbourShare > 0 {
		neighbour = o.Ranking.NeighbourShare
	}
	if o.Ranking.SessionShare > 0 {
		session = o.Ranking.SessionShare
	}
	if o.Ranking.NoNeighbours {
		neighbour = 0
	}
	if o.Ranking.NoSession {
		session = 0
	}
	return neighbour, session
}

// lexContext is what inContext learned of the lexical list: the
// sessions of its episodes and of the neighbours it added (for the
// diversification of the fused list), and which records joined the list
// as neighbours only (named as found by the "context" list).
type lexContext struct {
	sessions map[string]string
	joined   map[string]bool
}

// inContext is lex, q's lexical list (best first), scored again with its
// episodes' neighbours and sessions and sorted by the new score. A store
// that is no Neighbourer, or a list without episodes of the subject,
// leaves lex as it is.
func (s *Service) inContext(ctx context.Context, sc Scope, q SearchQuery, lex []Ranked) ([]Ranked, lexContext, error) {
	var lc lexContext
	nb, ok := s.store.(Neighbourer)
	if !ok || len(lex) == 0 {
		return lex, lc, nil
	}
	ids := make([]string, len(lex))
	for i, r := range lex {
		ids[i] = r.ID
	}
	near, err := nb.Neighbours(ctx, sc, q, ids)
	if err != nil || len(near) == 0 {
		return lex, lc, err
	}
	neighbour, session := s.opts.contextSettings()
	score := make(map[string]float64, 2*len(lex))
	sessions := make(map[string]string, 2*len(lex))
	inLex := make(map[string]bool, len(lex))
	for _, r := range lex {
		inLex[r.ID] = true
	}
	lc = lexContext{sessions: sessions, joined: map[string]bool{}}
	relevance := map[string]float64{}
	out := make([]Ranked, 0, 2*len(lex))
	add := func(id string) {
		if _, ok := score[id]; !ok {
			score[id] = 0
			out = append(out, Ranked{ID: id})
		}
	}
	for _, r := range lex {
		add(r.ID)
		score[r.ID] += r.Score
		n, ok := near[r.ID]
		if !ok {
			continue
		}
		if n.Session != "" {
			sessions[r.ID] = n.Session
			relevance[n.Session] += r.Score
		}
		if neighbour == 0 {
			continue
		}
		for _, id := range []string{n.Prev, n.Next} {
			if id != "" {
				add(id)
				lc.joined[id] = !inLex[id]
				score[id] += neighbour * r.Score
				if n.Session != "" {
					sessions[id] = n.Session
				}
			}
		}
	}
	if best := maxValue(relevance); session > 0 && best > 0 {
		top := lex[0].Score
		for id, sess := range sessions {
			score[id] += session * top * relevance[sess] / best
		}
	}
	for i := range out {
		out[i].Score = score[out[i].ID]
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	return out, lc, nil
}

func maxValue(m map[string]float64) float64 {
	var best float64
	for _, v := range m {
		best = max(best, v)
	}
	return best
}
