package storetest

import (
	"slices"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
)

// A hybrid search recalls an episode with the episode written next after
// it in its namespace by its owner (temporal contiguity): a reply that
// shares no word with the query is found after the turn it answers, named
// as found by the "context" list; an episode of another namespace written
// in between is not taken for it, and facts have no such order. Lexical
// search is left as it is.
func testHybridContext(t *testing.T, e *env) {
	e.withEmbedder(builtinEmbedder(t, 0))
	alice := e.user("acme", "alice")
	episode := func(ns, body string) string {
		return e.remember(alice, custody.Candidate{Namespace: ns, Class: custody.ClassEpisode, Body: body, Channel: "user"}).ID
	}
	turn := episode("chat", "the flurbix arrived this morning")
	between := episode("diary", "cold weather all week")
	reply := episode("chat", "great, which colour did you pick?")
	fact := e.fact(alice, "notes", "the flurbix warranty lasts two years").ID
	afterFact := e.fact(alice, "notes", "dentist appointment on tuesday").ID
	e.embedPending()
	q := "flurbix"
	if got := itemIDs(e.ranked(alice, custody.SearchInput{Query: q, Mode: custody.ModeLexical})); len(got) != 2 || slices.Contains(got, reply) {
		t.Errorf("lexical %q = %v, want the turn %s and the fact %s only", q, got, turn, fact)
	}
	got := e.ranked(alice, custody.SearchInput{Query: q, Mode: custody.ModeHybrid})
	ids := itemIDs(got)
	if len(ids) != 3 || !slices.Contains(ids[:2], turn) || !slices.Contains(ids[:2], fact) || ids[2] != reply {
		t.Fatalf("hybrid %q = %v, want the turn %s and the fact %s, then the reply %s", q, ids, turn, fact, reply)
	}
	if l := got.Items[2].Lists; !slices.Equal(l, []string{"context"}) {
		t.Errorf("the reply's lists = %v, want [context]", l)
	}
	for _, id := range []string{between, afterFact} {
		if slices.Contains(ids, id) {
			t.Errorf("hybrid %q returned %s, which follows no matching episode of its namespace: %v", q, id, ids)
		}
	}
}

// The episode taken after a match is the first that the caller may
// retrieve: an expired episode and a superseded version of a keyed one,
// written right after the match, are skipped, never returned, and the
// eligible reply after them is; another user, who may not see the match,
// gets neither.
func testHybridContextEligibility(t *testing.T, e *env) {
	e.withEmbedder(builtinEmbedder(t, 0))
	alice, bob := e.user("acme", "alice"), e.user("acme", "bob")
	episode := func(in custody.Candidate) string {
		in.Namespace, in.Class, in.Channel = "chat", custody.ClassEpisode, "user"
		return e.remember(alice, in).ID
	}
	turn := episode(custody.Candidate{Body: "the flurbix arrived this morning"})
	soon := e.clock.Now().Add(time.Minute)
	expired := episode(custody.Candidate{Body: "back in a minute", ExpiresAt: &soon})
	superseded := episode(custody.Candidate{Key: "status", Body: "status: waiting for the courier"})
	reply := episode(custody.Candidate{Body: "great, which colour did you pick?"})
	current := episode(custody.Candidate{Key: "status", Body: "status: all delivered"})
	e.embedPending()
	e.clock.Advance(time.Hour)
	got := itemIDs(e.ranked(alice, custody.SearchInput{Query: "flurbix", Mode: custody.ModeHybrid, Limit: custody.MaxSearchLimit}))
	if !slices.Equal(got, []string{turn, reply}) {
		t.Errorf("alice's hybrid search = %v, want the turn %s then the reply %s (expired %s and superseded %s skipped, current %s not after a match)", got, turn, reply, expired, superseded, current)
	}
	if got := itemIDs(e.ranked(bob, custody.SearchInput{Query: "flurbix", Mode: custody.ModeHybrid, Limit: custody.MaxSearchLimit})); len(got) != 0 {
		t.Errorf("bob's hybrid search = %v, want nothing of alice's", got)
	}
}
