package lexical

import (
	"slices"
	"strings"
	"testing"
)

func TestDocumentAndQuery(t *testing.T) {
	for _, tc := range []struct {
		text       string
		doc, query []string
	}{
		{"Brief replies, please", []string{"brief", "repli", "pleas"}, []string{"brief", "repli", "pleas"}},
		{"I was running to the shop", []string{"run", "shop"}, []string{"run", "shop"}},
		{"the of and what is", nil, nil},
		{"Pay ACCT-7777.", []string{"pay", "acct-7777", "acct", "7777"}, []string{"pay", "acct-7777"}},
		{"mail Bob@Example.com", []string{"mail", "bob@example.com", "bob", "exampl", "com"}, []string{"mail", "bob@example.com"}},
		{"IBAN DE89370400440532013000", []string{"iban", "de89370400440532013000"}, []string{"iban", "de89370400440532013000"}},
		{"a follow-up call", []string{"follow", "call"}, []string{"follow", "call"}},
		{"payee.iban", []string{"payee.iban", "paye", "iban"}, []string{"payee.iban"}},
		// Case folded, as the gate folds: ß is ss, so Straßen and Strassen match.
		{"Häuser und Straßen", []string{"häuser", "und", "strassen"}, []string{"häuser", "und", "strassen"}},
		// The spellings real content has give the terms of the plain text.
		{"Pay ＡＣＣＴ－７７７７", []string{"pay", "acct-7777", "acct", "7777"}, []string{"pay", "acct-7777"}},
		{"Pay ACCT-٧٧٧٧", []string{"pay", "acct-7777", "acct", "7777"}, []string{"pay", "acct-7777"}},
		{"Pay ACCT\u2011" + "7777", []string{"pay", "acct-7777", "acct", "7777"}, []string{"pay", "acct-7777"}},
		{"Pay ACCT-77\u200b77\u200d", []string{"pay", "acct-7777", "acct", "7777"}, []string{"pay", "acct-7777"}},
		{"Pay \u202eACCT-7777\u202c&nbsp;please", []string{"pay", "acct-7777", "acct", "7777", "pleas"}, []string{"pay", "acct-7777", "pleas"}},
		{"Pay ACCT&#45;7777", []string{"pay", "acct-7777", "acct", "7777"}, []string{"pay", "acct-7777"}},
		{"the user's key", []string{"user", "key"}, []string{"user", "key"}},
	} {
		if got := Document(tc.text); !slices.Equal(got, tc.doc) {
			t.Errorf("Document(%q) = %q, want %q", tc.text, got, tc.doc)
		}
		if got := Query(tc.text, -1); !slices.Equal(got, tc.query) {
			t.Errorf("Query(%q) = %q, want %q", tc.text, got, tc.query)
		}
	}
}

func TestQueryBounds(t *testing.T) {
	if got := Query("reply replies replying cats dogs", 2); !slices.Equal(got, []string{"repli", "cat"}) {
		t.Errorf("Query deduplicates and bounds: got %q", got)
	}
	long := make([]byte, MaxTermBytes+1)
	for i := range long {
		long[i] = '7'
	}
	if got := Document(string(long)); len(got) != 0 {
		t.Errorf("a term over MaxTermBytes is kept: %q", got)
	}
}

// Words are the query terms of a text with repeats, each with a form that
// a query finds it by again.
func TestWords(t *testing.T) {
	got := Words("Replies: the reply to ACCT-7777, a follow-up")
	want := []Word{{"repli", "replies"}, {"repli", "reply"}, {"acct-7777", "acct-7777"}, {"follow", "follow"}}
	if !slices.Equal(got, want) {
		t.Fatalf("Words = %q, want %q", got, want)
	}
	for _, w := range got {
		if q := Query(w.Form, 1); !slices.Equal(q, []string{w.Term}) {
			t.Errorf("Query(%q) = %q, want [%s]", w.Form, q, w.Term)
		}
	}
}

// TestTerm: the term of one token is Query's.
func TestTerm(t *testing.T) {
	for _, tok := range []string{"replies", "running", "the", "acct-7777", "bob@example.com", "7777", "café", "東京", "payee.iban", strings.Repeat("a1", MaxTermBytes)} {
		want := ""
		if q := Query(tok, 1); len(q) == 1 {
			want = q[0]
		}
		if got := Term(tok); got != want {
			t.Errorf("Term(%q) = %q, Query's %q", tok, got, want)
		}
	}
}
