package storetest

import (
	"slices"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/embed"
)

// rankedWith is a hybrid search of c's by a service with the ranking
// steps of steps, over the store of e.
func (e *env) rankedWith(emb embed.Embedder, steps custody.RankingSteps, c *custody.Caller, in custody.SearchInput) []string {
	e.t.Helper()
	pol, err := custody.ParsePolicy(policyText)
	if err != nil {
		e.t.Fatal(err)
	}
	svc, err := custody.New(e.store, e.svc.ServerKey(), custody.Options{Now: e.clock.Now, Policy: pol, Embedder: emb, Ranking: steps})
	if err != nil {
		e.t.Fatal(err)
	}
	in.Mode = custody.ModeHybrid
	res, err := svc.SearchRanked(e.ctx, c, in)
	if err != nil {
		e.t.Fatalf("search %+v: %v", in, err)
	}
	return itemIDs(res)
}

// session opens a session of c's.
func (e *env) session(c *custody.Caller) string {
	e.t.Helper()
	s, err := e.svc.OpenSession(e.ctx, c)
	if err != nil {
		e.t.Fatal(err)
	}
	return s.ID
}

// A hybrid search scores an episode with the words of its neighbours
// (neighbours.go): the turn written just before a match, which shares no
// word with the query, is found through it, named as found by the
// "context" list, and not without the step. The neighbour is the
// previous episode the caller may retrieve: an expired one written in
// between is skipped, never returned. An expired episode holding the
// query's words lends nothing to the turn before it: the ranking is the
// one of the store without it.
func testHybridNeighbours(t *testing.T, e *env) {
	emb := builtinEmbedder(t, 0)
	e.withEmbedder(emb)
	alice := e.user("acme", "alice")
	sess := e.session(alice)
	episode := func(body string, expires *time.Time) string { return e.episode(alice, sess, body, expires) }
	soon := e.clock.Now().Add(time.Minute)
	episode("cold weather all week", nil)
	question := episode("which colour would suit the hallway?", nil)
	between := episode("back in a minute", &soon)
	match := episode("the flurbix arrived this morning", nil)
	episode("the dentist moved to tuesday", nil)
	asked := episode("did the courier call again?", nil)
	// A fact holding the word, in the same lexical list: the store may
	// note it as no episode, and must still walk the episodes.
	fact := e.remember(alice, custody.Candidate{Namespace: "chat", Class: custody.ClassFact, Body: "notes on the flurbix warranty, the receipt and the box it came in", Channel: "user"}).ID
	e.embedPending()
	e.clock.Advance(time.Hour)
	in := custody.SearchInput{Query: "flurbix", Limit: custody.MaxSearchLimit}
	before := e.rankedWith(emb, custody.RankingSteps{}, alice, in)

	// An episode the caller cannot see, right after another, holding
	// the query's word.
	later := e.clock.Now().Add(time.Minute)
	hidden := episode("a second flurbix is on its way", &later)
	e.embedPending()
	e.clock.Advance(time.Hour)

	got := e.ranked(alice, custody.SearchInput{Query: "flurbix", Mode: custody.ModeHybrid, Limit: custody.MaxSearchLimit})
	ids := itemIDs(got)
	if !slices.Equal(ids, before) {
		t.Errorf("hybrid search = %v, want %v as before the expired %s was written", ids, before, hidden)
	}
	if len(ids) == 0 || ids[0] != match {
		t.Fatalf("hybrid search = %v, want the match %s first", ids, match)
	}
	at := slices.Index(ids, question)
	if at < 0 {
		t.Fatalf("hybrid search = %v, want the turn %s before the match %s", ids, question, match)
	}
	if l := got.Items[at].Lists; !slices.Equal(l, []string{"context"}) {
		t.Errorf("the turn before the match was found by %v, want [context]", l)
	}
	if !slices.Contains(ids, fact) {
		t.Errorf("hybrid search = %v, want the fact %s that holds the word", ids, fact)
	}
	for _, id := range []string{between, hidden, asked} {
		if slices.Contains(ids, id) {
			t.Errorf("hybrid search = %v returned %s: expired, or next to no visible match", ids, id)
		}
	}
	if ids := e.rankedWith(emb, custody.RankingSteps{NoNeighbours: true}, alice, in); slices.Contains(ids, question) {
		t.Errorf("without neighbours, hybrid search = %v found the turn %s", ids, question)
	}
}

// A hybrid search scores an episode with the relevance of its session
// (neighbours.go): of two turns alike, the one whose session says more
// of the query ranks first, where without the step the other does. The
// session's turns the caller cannot see count for nothing: while they
// are expired, the ranking is the one of the store without them.
func testHybridSession(t *testing.T, e *env) {
	emb := builtinEmbedder(t, 0)
	e.withEmbedder(emb)
	alice := e.user("acme", "alice")
	other, main := e.session(alice), e.session(alice)
	episode := func(sess, body string, expires *time.Time) string { return e.episode(alice, sess, body, expires) }
	// The other session's turn is shorter: by its words alone it ranks
	// first.
	alone := episode(other, "the flurbix arrived this morning", nil)
	episode(other, "cold weather all week", nil)
	inMain := episode(main, "the flurbix arrived this morning too", nil)
	episode(main, "the dentist moved to tuesday", nil)
	e.embedPending()
	in := custody.SearchInput{Query: "flurbix arrived morning", Limit: custody.MaxSearchLimit}
	order := func(steps custody.RankingSteps) (int, int) {
		ids := e.rankedWith(emb, steps, alice, in)
		return slices.Index(ids, inMain), slices.Index(ids, alone)
	}
	if m, a := order(custody.RankingSteps{}); m < 0 || a < 0 || a > m {
		t.Fatalf("hybrid search: the other session's turn at %d, the main session's at %d; want the other first", a, m)
	}
	before := e.rankedWith(emb, custody.RankingSteps{}, alice, in)

	// More of the main session speaks of the flurbix, where alice
	// cannot see it.
	mainTurns := []string{"the flurbix arrived in a big box", "pause", "it arrived one morning", "pause", "a flurbix in the morning", "pause"}
	soon := e.clock.Now().Add(time.Minute)
	var hidden []string
	for _, b := range mainTurns {
		hidden = append(hidden, episode(main, b, &soon))
	}
	e.embedPending()
	e.clock.Advance(time.Hour)
	if got := e.rankedWith(emb, custody.RankingSteps{}, alice, in); !slices.Equal(got, before) {
		t.Errorf("hybrid search = %v, want %v as before the expired %v were written", got, before, hidden)
	}

	// Then where she can.
	for _, b := range mainTurns {
		episode(main, b, nil)
	}
	e.embedPending()
	if m, a := order(custody.RankingSteps{}); m < 0 || a < 0 || m > a {
		t.Errorf("hybrid search: the main session's turn at %d, the other's at %d; want the main session's first", m, a)
	}
	if m, a := order(custody.RankingSteps{NoSession: true}); m < 0 || a < 0 || a > m {
		t.Errorf("without sessions, hybrid search: the other session's turn at %d, the main session's at %d; want the other first", a, m)
	}
}

// The first results of a hybrid search are diversified across sessions
// (diversify.go): a turn of a second session, ranked past the limit
// after alike turns of one session, is within it, where without the step
// it is not (with a stronger decay than the default's, for a store this
// small); an expired turn of that session is never returned.
func testHybridDiversity(t *testing.T, e *env) {
	emb := builtinEmbedder(t, 0)
	e.withEmbedder(emb)
	alice := e.user("acme", "alice")
	one, two := e.session(alice), e.session(alice)
	episode := func(sess, body string, expires *time.Time) string { return e.episode(alice, sess, body, expires) }
	soon := e.clock.Now().Add(time.Minute)
	hidden := episode(two, "flurbix flurbix", &soon)
	episode(two, "cold weather all week", nil)
	second := episode(two, "the flurbix came back from the shop", nil)
	for _, b := range []string{"flurbix", "a flurbix", "the flurbix", "our flurbix"} {
		episode(one, b, nil)
	}
	e.embedPending()
	e.clock.Advance(time.Hour)
	in := custody.SearchInput{Query: "flurbix", Limit: 3}
	all := e.rankedWith(emb, custody.RankingSteps{}, alice, custody.SearchInput{Query: "flurbix", Limit: custody.MaxSearchLimit})
	without := e.rankedWith(emb, custody.RankingSteps{NoDiversity: true}, alice, in)
	if slices.Contains(without, second) {
		t.Fatalf("without diversity, hybrid search = %v holds the second session's turn %s: the test needs it past the limit (all: %v)", without, second, all)
	}
	got := e.rankedWith(emb, custody.RankingSteps{SessionDecay: 0.5}, alice, in)
	if !slices.Contains(got, second) {
		t.Errorf("hybrid search = %v, want the second session's turn %s among the first %d (all: %v)", got, second, in.Limit, all)
	}
	if slices.Contains(all, hidden) {
		t.Errorf("hybrid search = %v returned the expired %s", all, hidden)
	}
}

// episode writes an episode of c's in namespace chat and session sess
// (expiring at expires, if set) and returns its id.
func (e *env) episode(c *custody.Caller, sess, body string, expires *time.Time) string {
	return e.remember(c, custody.Candidate{Namespace: "chat", Class: custody.ClassEpisode, Body: body, Channel: "user", Session: sess, ExpiresAt: expires}).ID
}
