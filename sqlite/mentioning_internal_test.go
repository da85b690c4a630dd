package sqlite

import (
	"strings"
	"testing"
)

// A lookup asks for at most maxTrigrams trigrams of its text, the first
// and the last among them, each quoted so that no character of the text
// is FTS5 syntax.
func TestTrigramQuery(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"abc", `"abc"`},
		{"abcd", `"abc" AND "bcd"`},
		{"aaaa", `"aaa"`},
		{`a"b"c`, `"a""b" AND """b""" AND "b""c"`},
		{"é€ü€", `"é€ü" AND "€ü€"`},
	} {
		if got := trigramQuery(c.text); got != c.want {
			t.Errorf("trigramQuery(%q) = %s, want %s", c.text, got, c.want)
		}
	}
	long := "0123456789abcdefghijklmnopqrstuvwxyz"
	got := strings.Split(trigramQuery(long), " AND ")
	if len(got) != maxTrigrams || got[0] != `"012"` || got[len(got)-1] != `"xyz"` {
		t.Fatalf("trigramQuery of %d characters = %v: want %d trigrams from \"012\" to \"xyz\"", len(long), got, maxTrigrams)
	}
	for _, g := range got {
		if !strings.Contains(long, strings.Trim(g, `"`)) {
			t.Errorf("%s is not a trigram of %q", g, long)
		}
	}
}
