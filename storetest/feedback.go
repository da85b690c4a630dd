package storetest

import (
	"slices"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
)

// A hybrid search expands its query by the words of its first lexical
// matches (pseudo-relevance feedback): a record that shares no word with
// the query but the rare words of its best match is found, by the lexical
// list of the expanded query, where lexical search alone does not find it.
// The words are ones WordNet does not know, so the semantic list finds
// only the records holding the query's own word.
func testHybridFeedback(t *testing.T, e *env) {
	e.withEmbedder(builtinEmbedder(t, 0))
	alice := e.user("acme", "alice")
	match := e.fact(alice, "notes", "the zorblax board meets quintrel and mivvy").ID
	related := e.fact(alice, "notes", "quintrel and mivvy sent the minutes").ID
	for _, b := range []string{"the garden needs watering on sunday", "invoice 4411 is due on friday", "concert tickets for the weekend"} {
		e.fact(alice, "notes", b)
	}
	e.embedPending()
	q := "zorblax"
	if got := itemIDs(e.ranked(alice, custody.SearchInput{Query: q, Mode: custody.ModeLexical})); !slices.Equal(got, []string{match}) {
		t.Errorf("lexical %q = %v, want only %s", q, got, match)
	}
	if got := itemIDs(e.ranked(alice, custody.SearchInput{Query: q, Mode: custody.ModeSemantic})); !slices.Equal(got, []string{match}) {
		t.Errorf("semantic %q = %v, want only %s", q, got, match)
	}
	got := e.ranked(alice, custody.SearchInput{Query: q, Mode: custody.ModeHybrid})
	if ids := itemIDs(got); !slices.Equal(ids, []string{match, related}) {
		t.Fatalf("hybrid %q = %v, want %s then %s (found by feedback)", q, ids, match, related)
	}
	if l := got.Items[0].Lists; !slices.Equal(l, []string{"lexical", "semantic"}) {
		t.Errorf("the match's lists = %v, want [lexical semantic]", l)
	}
	if l := got.Items[1].Lists; !slices.Equal(l, []string{"lexical"}) {
		t.Errorf("the related record's lists = %v, want [lexical]", l)
	}
}

// Feedback takes words only from records the caller may retrieve: a
// quarantined record, an expired one, another user's owner-only record
// and another tenant's, each the query's best match if it were visible,
// lend no word, so alice's records holding their words (and not the
// query's) are not found. Its twin: once alice holds such a match
// herself, its words find her related record.
func testHybridFeedbackEligibility(t *testing.T, e *env) {
	e.withEmbedder(builtinEmbedder(t, 0))
	alice, bob := e.user("acme", "alice"), e.user("acme", "bob")
	mail := e.act(e.principal("acme", "mail", []string{"agent"}, []string{"tool:email"}, nil), "alice")
	q := "glimmox"
	quarantined := e.remember(mail, custody.Candidate{Namespace: "notes", Class: custody.ClassFact, Body: "glimmox snarfle", Channel: "tool:email"})
	if quarantined.State != custody.StateQuarantined {
		t.Fatalf("the email's fact is %s, want quarantined", quarantined.State)
	}
	soon := e.clock.Now().Add(time.Minute)
	hidden := []string{
		quarantined.ID,
		e.remember(alice, custody.Candidate{Namespace: "notes", Class: custody.ClassFact, Body: "glimmox wibbet", Channel: "user", ExpiresAt: &soon}).ID,
		e.fact(bob, "notes", "glimmox quaffle").ID,
		e.fact(e.user("other", "alice"), "notes", "glimmox brindle").ID,
	}
	var partners []string
	for _, b := range []string{"snarfle report", "wibbet report", "quaffle report", "brindle report"} {
		partners = append(partners, e.fact(alice, "notes", b).ID)
	}
	e.embedPending()
	e.clock.Advance(time.Hour)
	for _, mode := range []custody.SearchMode{custody.ModeHybrid, custody.ModeSemantic, custody.ModeLexical} {
		if got := itemIDs(e.ranked(alice, custody.SearchInput{Query: q, Mode: mode, Limit: custody.MaxSearchLimit})); len(got) != 0 {
			t.Errorf("alice's %s %q = %v; want nothing: she holds no visible record of it (hidden %v, their words' records %v)", mode, q, got, hidden, partners)
		}
	}
	own := e.fact(alice, "notes", "glimmox snarfle").ID
	e.embedPending()
	got := itemIDs(e.ranked(alice, custody.SearchInput{Query: q, Mode: custody.ModeHybrid, Limit: custody.MaxSearchLimit}))
	if !slices.Equal(got, []string{own, partners[0]}) {
		t.Errorf("alice's hybrid %q = %v; want her %s then, by its word, %s", q, got, own, partners[0])
	}
}
