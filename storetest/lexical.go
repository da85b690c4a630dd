package storetest

import (
	"slices"
	"testing"

	custody "github.com/custody-mem/custody"
)

// Search matches English words by their stems: "replies" finds "reply",
// "running" finds "run", and the other way round; an unrelated word finds
// neither.
func testSearchStemming(t *testing.T, e *env) {
	alice := e.user("acme", "alice")
	reply := e.fact(alice, "s", "Keep each reply short").ID
	run := e.fact(alice, "s", "I run every morning").ID
	e.fact(alice, "s", "dinner at eight")
	for _, c := range []struct {
		q    string
		want []string
	}{
		{"brief replies", []string{reply}},
		{"replying", []string{reply}},
		{"running", []string{run}},
		{"runs", []string{run}},
		{"RUNNING replies", []string{reply, run}},
		{"swimming", []string{}},
	} {
		if got := e.searchIDs(alice, custody.SearchInput{Query: c.q}); !sameSet(got, c.want) {
			t.Errorf("search %q = %v, want %v", c.q, got, c.want)
		}
	}
}

// English stopwords are not terms: a query of stopwords matches nothing
// (not every record holding "the"), and a stopword beside a real word
// does not widen the match; the real word still finds its record.
func testSearchStopwords(t *testing.T, e *env) {
	alice := e.user("acme", "alice")
	cat := e.fact(alice, "s", "the cat is on the mat").ID
	e.fact(alice, "s", "the dog is in the garden")
	e.fact(alice, "s", "this is what it was")
	if got := e.searchIDs(alice, custody.SearchInput{Query: "the is what it"}); len(got) != 0 {
		t.Errorf("a stopword-only query = %v, want nothing", got)
	}
	if got := e.searchIDs(alice, custody.SearchInput{Query: "the cat"}); !slices.Equal(got, []string{cat}) {
		t.Errorf(`search "the cat" = %v, want the cat only [%s]`, got, cat)
	}
}

// Identifiers (account numbers, IBANs, e-mail addresses, keys) match
// whole and exactly, case-insensitively: ACCT-7777 never finds ACCT-7778,
// nor one IBAN or address another that shares its parts. A part of an
// identifier, searched alone, still finds every identifier that has it.
func testSearchIdentifiers(t *testing.T, e *env) {
	alice := e.user("acme", "alice")
	ids := e.identifierRecords(alice)
	a7777, a7778, iban, bob, carol, key := ids.a7777, ids.a7778, ids.iban, ids.bob, ids.carol, ids.key
	for _, c := range []struct {
		q    string
		want []string
	}{
		{"ACCT-7777", []string{a7777}},
		{"ＡＣＣＴ－７７７７", []string{a7777}},       // fullwidth
		{"ACCT-٧٧٧٧", []string{a7777}},       // Arabic-Indic digits
		{"ACCT\u20117777", []string{a7777}},  // a non-breaking hyphen
		{"ACCT-77\u200b77", []string{a7777}}, // a zero-width space inside
		{"acct-7778", []string{a7778}},
		{"ACCT-7779", []string{}},
		{"7777", []string{a7777}},
		{"ACCT", []string{a7777, a7778}},
		{"de89370400440532013000", []string{iban}},
		{"DE8937040044053201300", []string{}},
		{"bob@example.com", []string{bob}},
		{"dave@example.com", []string{}},
		{"example", []string{bob, carol}},
		{"payee.iban", []string{key}},
	} {
		if got := e.searchIDs(alice, custody.SearchInput{Query: c.q}); !sameSet(got, c.want) {
			t.Errorf("search %q = %v, want %v", c.q, got, c.want)
		}
	}
	// Beside a word both share, the exact identifier ranks its record
	// first, strictly above the other.
	hits, err := e.svc.Search(e.ctx, alice, custody.SearchInput{Query: "ACCT-7777 account"})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 || hits[0].ID != a7777 || hits[1].ID != a7778 || !(hits[0].Score > hits[1].Score) {
		t.Errorf("search ACCT-7777 account = %v, want %s strictly above %s", scoredIDs(hits), a7777, a7778)
	}
}

// identifierRecords are alice's records of the identifier tests: two
// accounts, two IBANs and two addresses that share parts, and a keyed
// record (ids of the ones the tests look for).
type identifierRecords struct{ a7777, a7778, iban, bob, carol, key string }

func (e *env) identifierRecords(alice *custody.Caller) identifierRecords {
	var r identifierRecords
	r.a7777 = e.fact(alice, "s", "Savings account ACCT-7777 at the bank.").ID
	r.a7778 = e.fact(alice, "s", "Checking account ACCT-7778 at the bank.").ID
	r.iban = e.fact(alice, "s", "Pay rent to DE89370400440532013000").ID
	e.fact(alice, "s", "Old landlord DE89370400440532013001")
	r.bob = e.fact(alice, "s", "Write to bob@example.com for invoices").ID
	r.carol = e.fact(alice, "s", "Write to carol@example.com for receipts").ID
	r.key = e.remember(alice, custody.Candidate{Namespace: "s", Key: "payee.iban", Class: custody.ClassFact, Body: "DE00 on file", Channel: "user"}).ID
	return r
}
