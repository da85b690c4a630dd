package custody

import (
	"context"
	"slices"
	"sort"
)

// Temporal contiguity: an episode is recalled with the one that followed
// it. When a hybrid search's best matches are the subject's own episodes
// (a conversation's turns, say), the episode written next after each in
// its namespace joins the ranking with a share of its predecessor's
// score: a reply that answers a matching turn without repeating its
// words ("which colour did you pick?" after "the parcel arrived") is
// found with it. This is the contiguity effect of episodic memory, and
// what retrieval over chunked documents does when it returns a match's
// neighbouring chunk. Facts, preferences and other classes have no such
// order, and are left as they are. Settings, measured on the LoCoMo development
// conversations (docs/benchmarks.md):
const (
	// contextDepth is how many of the fused list's first items lend
	// their score to the episode after them.
	contextDepth = 10
	// contextShare is the share of an item's score the episode after it
	// gains.
	contextShare = 0.5
)

// Follower is implemented by a store that can find the episode written
// next after each of a set of records.
type Follower interface {
	// Following maps each of ids that is an episode of s's subject (an
	// episode it owns) to the first episode after it (in id order, which
	// is write order) of the same tenant, owner and namespace that is
	// eligible for s and passes q's filters, inside the query; an id with
	// none is left out. (From the subject's own episodes only: the walk
	// then passes few ineligible ones, where another owner's later
	// episodes might all be private to it.)
	Following(ctx context.Context, s Scope, q SearchQuery, ids []string) (map[string]string, error)
}

// withContext adds to fused (best first) the episodes following its first
// contextDepth items: each gains share (contextShare) of the score of the item
// before it, is named as found by the "context" list when no other list
// found it, and the items after the first are ranked again by score. The
// first item keeps its place: the best match is not displaced by a
// neighbour. A store that is no Follower leaves fused as it is.
func withContext(ctx context.Context, st Store, sc Scope, q SearchQuery, fused []candidate, share float64) ([]candidate, error) {
	f, ok := st.(Follower)
	if !ok || len(fused) == 0 {
		return fused, nil
	}
	head := make([]candidate, min(len(fused), contextDepth))
	copy(head, fused)
	ids := make([]string, len(head))
	for i, h := range head {
		ids[i] = h.ID
	}
	next, err := f.Following(ctx, sc, q, ids)
	if err != nil || len(next) == 0 {
		return fused, err
	}
	at := make(map[string]int, len(fused))
	for i, h := range fused {
		at[h.ID] = i
	}
	for _, h := range head {
		n, ok := next[h.ID]
		if !ok || slices.Equal(h.Lists, []string{"context"}) {
			continue // a neighbour found by context lends nothing further
		}
		i, found := at[n]
		if !found {
			i = len(fused)
			at[n] = i
			fused = append(fused, candidate{ID: n, Lists: []string{"context"}})
		}
		fused[i].Score += share * h.Score
	}
	rest := fused[1:]
	sort.SliceStable(rest, func(i, j int) bool { return rest[i].Score > rest[j].Score })
	return fused, nil
}

// contextShareIn is the share in use: the constant, or what
// Options.Ranking sets for a measurement.
func (o *Options) contextShareIn() float64 {
	if o.Ranking.ContextShare > 0 {
		return o.Ranking.ContextShare
	}
	return contextShare
}
