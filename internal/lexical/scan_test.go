package lexical

import (
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kljensen/snowball/english"
)

// The hand-written scanners split text exactly as the regular expressions
// they replaced did, on text built from the characters that matter: ASCII
// letters and digits, joiners, spaces and punctuation, letters and digits
// of other scripts, combining marks, invalid UTF-8, and characters whose
// lower case is longer or not a letter (İ).
func TestScannersMatchTheExpressions(t *testing.T) {
	tokenRE := regexp.MustCompile(`[\p{L}\p{N}]+(?:[-_.@+][\p{L}\p{N}]+)*`)
	runRE := regexp.MustCompile(`[\p{L}\p{N}]+`)
	alphabet := []string{"a", "Z", "7", "-", "_", ".", "@", "+", " ", ",", "'", "ß", "é", "İ", "\u0307", "٣", "Ⅻ", "½", "中", "\xff", "\xe2\x82", "--", ".."}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var b strings.Builder
		for range rng.IntN(24) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		text := b.String()
		if got, want := tokens(text), tokenRE.FindAllString(text, -1); !slices.Equal(got, want) {
			t.Fatalf("tokens(%q) = %q, the expression finds %q", text, got, want)
		}
		low := strings.ToLower(text)
		if got, want := runs(low), runRE.FindAllString(low, -1); !slices.Equal(got, want) {
			t.Fatalf("runs(%q) = %q, the expression finds %q", low, got, want)
		}
	}
}

// The cache of stems gives each word the term stemming it gives, the
// first time and after, and past its bound.
func TestStemCacheAgrees(t *testing.T) {
	direct := func(w string) string {
		if english.IsStopWord(w) {
			return ""
		}
		return english.Stem(w, false)
	}
	letters := "abcdefghijklmnopqrstuvwxyz"
	rng := rand.New(rand.NewPCG(3, 4))
	words := []string{"the", "replies", "running", "what", "is", "cats"}
	for range maxStems + 1000 {
		var b strings.Builder
		for range 1 + rng.IntN(9) {
			b.WriteByte(letters[rng.IntN(len(letters))])
		}
		words = append(words, b.String())
	}
	for pass := range 2 {
		for _, w := range words {
			if got, want := word(w), direct(w); got != want {
				t.Fatalf("pass %d: word(%q) = %q, stemming gives %q", pass, w, got, want)
			}
		}
	}
}

func BenchmarkDocument(b *testing.B) {
	text := "note 4711: invoice42 meeting17 travel3 payroll88 garden1 ACCT-7777 bob@example.com replies"
	for b.Loop() {
		Document(text)
	}
}
