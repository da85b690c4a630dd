package canon

import (
	"strings"
	"unicode"
)

// MaxRuns bounds the runs one match may join: an identifier spelled in
// groups (an IBAN of 34 characters in single letters and digits at most)
// is found, and no match reaches across a whole document.
const MaxRuns = 64

// Runs splits s, folded, into its runs of letters, digits and combining
// marks. Everything else separates two runs: spaces of every kind, line
// breaks, format and bidi controls (zero-width space, soft hyphen,
// right-to-left override), dashes, slashes, dots, underscores, and every
// other punctuation or symbol.
func Runs(s string) []string {
	return runsOf(Fold(s))
}

func runsOf(f string) []string {
	var out []string
	start := -1
	for i, r := range f {
		if inRun(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			out = append(out, f[start:i])
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, f[start:])
	}
	return out
}

func inRun(r rune) bool {
	if r < 0x80 {
		return 'a' <= r && r <= 'z' || '0' <= r && r <= '9' || 'A' <= r && r <= 'Z'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.M, r)
}

// Ident is the canonical form of a text value or identifier: its runs
// joined, folded ("XK05 1212–0123" is "xk0512120123").
func Ident(s string) string { return strings.Join(Runs(s), "") }

// Runner is a text split into runs once, to look several values up in.
type Runner []string

// NewRunner splits text into its runs.
func NewRunner(text string) Runner { return Runner(Runs(text)) }

// Holds reports whether ident (an Ident) is a sequence of whole
// consecutive runs of the text, at most MaxRuns of them: "acct7777" is in
// "payee: ACCT-7777." but not in "ACCT-77770" nor in "xACCT 7777".
func (rs Runner) Holds(ident string) bool {
	if ident == "" {
		return false
	}
	for i, r := range rs {
		if !strings.HasPrefix(ident, r) {
			continue
		}
		pos := len(r)
		for j := i + 1; pos < len(ident) && j < len(rs) && j-i < MaxRuns; j++ {
			if !strings.HasPrefix(ident[pos:], rs[j]) {
				break
			}
			pos += len(rs[j])
		}
		if pos == len(ident) {
			return true
		}
	}
	return false
}

// Holds reports whether text holds the value whose Ident is ident, as
// Runner.Holds does.
func Holds(text, ident string) bool { return NewRunner(text).Holds(ident) }
