package custody

import (
	"context"
	"math"
	"slices"
)

// Diversity: a question whose answer is spread over several
// conversations needs turns of each in its first results, and the best
// session's turns, all scoring alike, would otherwise fill them. The
// first results of a hybrid search hold at most sessionCap episodes of
// any one session; the others follow them, in their order. Episodes of
// no session, and records that are no episodes, are not capped. Setting,
// tuned on one LoCoMo development conversation and measured on the
// other (docs/benchmarks.md):
const sessionDecay = 0.95

// sessionDecayIn is the decay in use: the constant, or what
// Options.Ranking sets for a measurement; 1 for none.
func (o *Options) sessionDecayIn() float64 {
	switch {
	case o.Ranking.NoDiversity:
		return 1
	case o.Ranking.SessionDecay > 0:
		return o.Ranking.SessionDecay
	}
	return sessionDecay
}

// diversified is fused (best first) with at most the cap of items of one
// session among its first limit: the items past a session's cap move
// after the first limit, in their order. sessions holds the sessions
// known from the lexical list; those of the other items among the first
// few limits are asked of the store (Neighbourer, inside the eligibility
// filter like every candidate query).
func (s *Service) diversified(ctx context.Context, sc Scope, q SearchQuery, fused []candidate, sessions map[string]string, limit int) ([]candidate, error) {
	nb, ok := s.store.(Neighbourer)
	if s.opts.sessionDecayIn() == 1 || !ok || len(fused) <= limit {
		return fused, nil
	}
	head := fused[:min(len(fused), 3*limit)]
	var unknown []string
	for _, h := range head {
		if _, ok := sessions[h.ID]; !ok {
			unknown = append(unknown, h.ID)
		}
	}
	if len(unknown) > 0 {
		near, err := nb.Neighbours(ctx, sc, q, unknown)
		if err != nil {
			return nil, err
		}
		known := make(map[string]string, len(sessions)+len(near))
		for id, sess := range sessions {
			known[id] = sess
		}
		for id, n := range near {
			if n.Session != "" {
				known[id] = n.Session
			}
		}
		sessions = known
	}
	// Greedy: the next item is the one of the best score discounted by
	// decay for each item of its session already taken.
	decay := s.opts.sessionDecayIn()
	// The first item keeps its place, as in withContext.
	rest := slices.Clone(head[1:])
	out := append(make([]candidate, 0, len(fused)), head[0])
	count := map[string]int{sessions[head[0].ID]: 1}
	for len(out) < limit && len(rest) > 0 {
		bi, bs := 0, -1.0
		for i, h := range rest {
			v := h.Score * math.Pow(decay, float64(count[sessions[h.ID]]))
			if sessions[h.ID] == "" {
				v = h.Score
			}
			if v > bs {
				bi, bs = i, v
			}
		}
		h := rest[bi]
		rest = slices.Delete(rest, bi, bi+1)
		if sess := sessions[h.ID]; sess != "" {
			count[sess]++
		}
		out = append(out, h)
	}
	out = append(out, rest...)
	return append(out, fused[len(head):]...), nil
}
