package storetest

import (
	"slices"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/embed"
)

// The identifier rule holds in every mode and with every built-in
// embedder, not only in lexical search, and for the spellings real
// content has (HTML mail, a JSON result, no-break and zero-width spaces,
// fullwidth forms, other digit sets, non-breaking hyphens, bidi
// controls): a search for ACCT-7777 never
// returns ACCT-7778, which shares its part "acct" and the words around
// it (neither through the semantic list's word vectors nor through the
// feedback words of ACCT-7777's record), nor one IBAN or address
// another. The twins: the identifier's own record is found, a part
// searched alone finds what holds it, and a word both records share
// finds both, the exact identifier ranking its record first.
func testHybridIdentifiers(t *testing.T, e *env) {
	alice := e.user("acme", "alice")
	ids := e.identifierRecords(alice) // lexical.go
	a7777, a7778, iban, bob := ids.a7777, ids.a7778, ids.iban, ids.bob
	// ACCT-7778 again, as real content spells it: in HTML mail, in a
	// structured result, between no-break spaces and a zero-width space,
	// in fullwidth letters and digits, in Arabic-Indic digits, with a
	// non-breaking hyphen, with a zero-width space inside it and behind
	// bidi controls.
	all7778 := []string{a7778,
		e.fact(alice, "s", "<p>Checking account <b>ACCT-7778</b>&nbsp;at the bank</p>").ID,
		e.fact(alice, "s", `{"payee_account": "ACCT-7778", "note": "checking account at the bank"}`).ID,
		e.fact(alice, "s", "Checking\u00a0account\u00a0ACCT-7778\u200b at the bank").ID,
		e.fact(alice, "s", "Checking account ＡＣＣＴ－７７７８ at the bank").ID,
		e.fact(alice, "s", "Checking account ACCT-٧٧٧٨ at the bank").ID,
		e.fact(alice, "s", "Checking account ACCT\u20117778 at the bank").ID,
		e.fact(alice, "s", "Checking account ACCT-77\u200b78 at the bank").ID,
		e.fact(alice, "s", "Checking account \u202eACCT-7778\u202c at the bank").ID,
	}
	for _, provider := range []string{"builtin", "glove"} {
		emb, err := embed.New(embed.Config{Provider: provider})
		if err != nil {
			t.Fatal(err)
		}
		e.withEmbedder(emb)
		for _, mode := range []custody.SearchMode{custody.ModeHybrid, custody.ModeSemantic} {
			for _, c := range []struct {
				q    string
				want []string
			}{
				{"ACCT-7777", []string{a7777}},
				{"\u00a0ACCT-7777\u200b", []string{a7777}},
				{"ＡＣＣＴ－７７７７", []string{a7777}},
				{"ACCT-٧٧٧٧", []string{a7777}},
				{"ACCT\u20117777", []string{a7777}},
				{"ACCT-77\u200d77", []string{a7777}},
				{"acct-7778", all7778},
				{"ACCT-7779", nil},
				{"7777", []string{a7777}},
				{"DE89370400440532013000", []string{iban}},
				{"bob@example.com", []string{bob}},
				{"dave@example.com", nil},
			} {
				got := itemIDs(e.ranked(alice, custody.SearchInput{Query: c.q, Mode: mode}))
				if !sameSet(got, c.want) {
					t.Errorf("%s, %s search %q = %v, want %v", provider, mode, c.q, got, c.want)
				}
			}
		}
		got := itemIDs(e.ranked(alice, custody.SearchInput{Query: "ACCT-7777 account", Mode: custody.ModeHybrid}))
		if len(got) < 2 || got[0] != a7777 || !slices.Contains(got, a7778) {
			t.Errorf("%s, hybrid search %q = %v, want %s first and %s (by the word account) after it", provider, "ACCT-7777 account", got, a7777, a7778)
		}
	}
}
