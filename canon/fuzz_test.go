package canon

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

var fuzzSeeds = append(append([]string{}, ibanSpellings...),
	"pay 4,90,000", "pay ٤٩٠٠", "four thousand nine hundred", "4.9k", "1.234,56 €",
	"billing-desk (at) evil (dot) example", "Name \\u003ca@b.example\\u003e", "&#64;&lt;&amp;",
	"\\ud800", "\\u", "&", "", "a b c", "mailto:x%40y.example", "2026-12-04 10:30",
)

func FuzzCanonicalFold(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Fold(s)
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("Fold(%q) = %q is not valid UTF-8", s, got)
		}
	})
}

func FuzzCanonicalRuns(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		runs := Runs(s)
		for _, r := range runs {
			if r == "" || strings.ContainsFunc(r, func(c rune) bool { return !inRun(c) }) {
				t.Fatalf("Runs(%q) holds %q, which is not a run", s, r)
			}
		}
		// A text holds every value made of up to MaxRuns of its own
		// consecutive runs, and Ident of such a value is those runs.
		rs := NewRunner(s)
		if got := strings.Join(runs, ""); got != Ident(s) {
			t.Fatalf("Ident(%q) = %q, want its runs joined %q", s, Ident(s), got)
		}
		for i := 0; i < len(runs) && i < 8; i++ {
			id := strings.Join(runs[i:min(len(runs), i+MaxRuns)], "")
			if !rs.Holds(id) {
				t.Fatalf("%q does not hold its own runs %q", s, id)
			}
		}
	})
}

func FuzzCanonicalAmounts(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, n := range Amounts(s) {
			if !canonicalRE.MatchString(n) || len(n) > MaxAmountLen {
				t.Fatalf("Amounts(%q) holds %q, which is not a canonical number", s, n)
			}
			if got := Amounts(n); !slices.Contains(got, n) {
				t.Fatalf("Amounts(%q) = %q, without the canonical number itself", n, got)
			}
		}
	})
}

func FuzzCanonicalEmails(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, m := range Emails(s) {
			if !emailRE.MatchString(m) || m != Fold(m) {
				t.Fatalf("Emails(%q) holds %q, which is not a folded address", s, m)
			}
			if got := Emails(m); !slices.Contains(got, m) {
				t.Fatalf("Emails(%q) = %q, without the address itself", m, got)
			}
		}
	})
}

func FuzzCanonicalAccount(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a := Account(s)
		if Account(a) != a {
			t.Fatalf("Account(Account(%q)) = %q, want %q", s, Account(a), a)
		}
		IBAN(a)
	})
}
