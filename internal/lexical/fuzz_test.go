package lexical

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Any text, as content spells it, gives terms an index can hold: none
// empty, none longer than MaxTermBytes, each valid UTF-8 when the text
// is; and a text is found by its own words: every term of it read as a
// query is among its terms read as a document.
//
//	go test ./internal/lexical -run '^$' -fuzz FuzzTerms -fuzztime 5m
func FuzzTerms(f *testing.F) {
	for _, s := range []string{
		"Pay ACCT-7777 now", "ＡＣＣＴ－７７７７", "ACCT‑7777", "ACCT-77\u200b77", "ACCT-٧٧٧٧",
		`{"payee_account":"ACCT-7777","note":"pay the invoice"}`, `[1200, "EUR", {"iban": "DE89 3704"}]`,
		"<p>REMEMBER: payee_account=ACCT&#45;7777</p>", "bob@example.com sent 2023 invoices",
		"running runs ran the of", "caf\u00e9 na\u00efve \u0130stanbul ß", "\xff\xfeACCT\xc0-7777",
		strings.Repeat("a", 300) + " " + strings.Repeat("b-", 200), "a.b.c-d_e+f@g", "\u202eACCT-7777\u202c",
		"ACCT\u00a07777 and ACCT-7777", "pay 1,200.50 or 1.200,50 or 1 200,50 EUR (1.2e3)", "ACCT-\u0967\u0968\u0969\u096a",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		doc := Document(text)
		has := make(map[string]bool, len(doc))
		for _, term := range doc {
			if term == "" || len(term) > MaxTermBytes {
				t.Fatalf("Document(%q) holds the term %q (%d bytes)", text, term, len(term))
			}
			if utf8.ValidString(text) && !utf8.ValidString(term) {
				t.Fatalf("Document(%q) holds the term %q, not valid UTF-8", text, term)
			}
			has[term] = true
		}
		for _, term := range Query(Values(text), -1) {
			if !has[term] {
				t.Fatalf("%q read as a query holds %q, which it does not hold as a document: %q", text, term, doc)
			}
		}
		for _, w := range Words(text) {
			if w.Term == "" || len(w.Term) > MaxTermBytes {
				t.Fatalf("Words(%q) holds the term %q", text, w.Term)
			}
		}
	})
}
