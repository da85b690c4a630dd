package canon

import (
	"slices"
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
func Ident(s string) string { return NewRunner(s).stream }

// Runner is a text split into runs once, to look several values up in:
// its runs joined, and where each begins.
type Runner struct {
	stream string
	starts []int // the offset of each run in stream, then len(stream)
}

// NewRunner splits text into its runs.
func NewRunner(text string) Runner {
	f := Fold(text)
	var b strings.Builder
	b.Grow(len(f))
	var starts []int
	in := false
	for _, r := range f {
		if !inRun(r) {
			in = false
			continue
		}
		if !in {
			starts = append(starts, b.Len())
			in = true
		}
		b.WriteRune(r)
	}
	return Runner{stream: b.String(), starts: append(starts, b.Len())}
}

// Holds reports whether ident (an Ident) is a sequence of whole
// consecutive runs of the text, at most MaxRuns of them: "acct7777" is in
// "payee: ACCT-7777." but not in "ACCT-77770" nor in "xACCT 7777".
func (rs Runner) Holds(ident string) bool {
	if ident == "" {
		return false
	}
	for from := 0; from < len(rs.stream); {
		i := strings.Index(rs.stream[from:], ident)
		if i < 0 {
			return false
		}
		i += from
		a, startOK := slices.BinarySearch(rs.starts, i)
		b, endOK := slices.BinarySearch(rs.starts, i+len(ident))
		if startOK && endOK && b-a <= MaxRuns {
			return true
		}
		from = i + 1
	}
	return false
}

// Holds reports whether text holds the value whose Ident is ident, as
// Runner.Holds does.
func Holds(text, ident string) bool { return NewRunner(text).Holds(ident) }
