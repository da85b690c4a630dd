package storetest

import (
	"slices"
	"testing"

	custody "github.com/custody-mem/custody"
)

// A body that is a JSON object or array (an agent framework's stored
// value) is searched by its values: a query of one of its keys does not
// find it (the keys are every such record's shape), a query of a value
// does, nested or in a list; and a hybrid search's feedback never lends
// a key, only a value. Its twin: prose holding the same word is found by
// it, and a rare value of the best match does lend itself.
func testSearchStructured(t *testing.T, e *env) {
	e.withEmbedder(builtinEmbedder(t, 0))
	alice := e.user("acme", "alice")
	doc := e.fact(alice, "store", `{"content": "the zorblax board meets quintrel", "kind": "minutes", "meta": {"tags": ["mivvy", 42]}}`).ID
	e.fact(alice, "store", `{"content": "garden needs watering", "kind": "chore"}`)
	prose := e.fact(alice, "notes", "what kind of content is this").ID
	related := e.fact(alice, "notes", "mivvy sent the agenda").ID
	for _, b := range []string{"invoice 4411 is due on friday", "concert tickets for the weekend"} {
		e.fact(alice, "notes", b)
	}
	e.embedPending()
	lexical := func(q string) []string {
		return itemIDs(e.ranked(alice, custody.SearchInput{Query: q, Mode: custody.ModeLexical}))
	}
	if got := lexical("kind content"); !slices.Equal(got, []string{prose}) {
		t.Errorf("lexical %q = %v, want only the prose %s: a JSON body's keys are not its words", "kind content", got, prose)
	}
	for _, q := range []string{"quintrel", "minutes", "mivvy", "42"} {
		if got := lexical(q); !slices.Contains(got, doc) {
			t.Errorf("lexical %q = %v, want the JSON record %s: its values are its words", q, got, doc)
		}
	}
	got := itemIDs(e.ranked(alice, custody.SearchInput{Query: "zorblax", Mode: custody.ModeHybrid}))
	if slices.Contains(got, prose) {
		t.Errorf("hybrid %q = %v holds %s: feedback lent a key of the best match", "zorblax", got, prose)
	}
	if !slices.Contains(got, related) || got[0] != doc {
		t.Errorf("hybrid %q = %v, want %s first and %s (found by the value mivvy)", "zorblax", got, doc, related)
	}
}
