package canon

import (
	"html"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Fold is the text every comparison starts from: HTML character references
// (&nbsp; &#64; &lt;) and JSON string escapes (\u003c, \n) decoded, as a
// reader of the raw text would read them; Unicode NFKC (fullwidth and
// mathematical letters, ligatures, no-break and thin spaces become their
// plain forms); case folded; letters of Cyrillic and Greek that look like
// Latin ones mapped to those; every decimal digit (Arabic-Indic,
// Devanagari, ...) mapped to its ASCII digit; the Arabic decimal and
// thousands separators to '.' and ','; typographic apostrophes to '.
//
// Nothing is removed: what separates the runs of a value is Runs'. Fold
// decodes once: "&amp;lt;" folds to "&lt;", as a browser shows it.
func Fold(s string) string {
	if plainASCII(s) {
		return strings.ToLower(s)
	}
	if strings.IndexByte(s, '&') >= 0 {
		s = html.UnescapeString(s)
	}
	if strings.IndexByte(s, '\\') >= 0 {
		s = unescapeJSON(s)
	}
	s = norm.NFKC.String(cases.Fold().String(norm.NFKC.String(s)))
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		b.WriteRune(foldRune(r))
	}
	return b.String()
}

// plainASCII reports whether s is ASCII holding neither '&' nor '\\': the
// common case, whose fold is its lower case.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || c == '&' || c == '\\' {
			return false
		}
	}
	return true
}

// foldRune maps one rune of NFKC case-folded text.
func foldRune(r rune) rune {
	if r < utf8.RuneSelf {
		return r
	}
	if l, ok := lookalike[r]; ok {
		return l
	}
	switch r {
	case '\u066b': // Arabic decimal separator
		return '.'
	case '\u066c': // Arabic thousands separator
		return ','
	case '\u2018', '\u2019', '\u02bc', '\u2032':
		return '\''
	}
	if unicode.Is(unicode.Nd, r) {
		return '0' + digitValue(r)
	}
	return r
}

// digitValue is the value of a decimal digit of any script. Unicode keeps
// every decimal digit set in ten consecutive code points from zero, and
// the Nd table's ranges are whole sets (TestDigitRanges).
func digitValue(r rune) rune {
	for _, rg := range unicode.Nd.R16 {
		if lo, hi := rune(rg.Lo), rune(rg.Hi); lo <= r && r <= hi {
			return (r - lo) % 10
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if lo, hi := rune(rg.Lo), rune(rg.Hi); lo <= r && r <= hi {
			return (r - lo) % 10
		}
	}
	return 0
}

// lookalike maps the lower-case Cyrillic and Greek letters whose upper or
// lower case looks like a Latin letter to that letter, so that "ХК05" in
// Cyrillic reads as the xk05 a reader (or a model) takes it for.
var lookalike = map[rune]rune{
	// Cyrillic
	'а': 'a', 'в': 'b', 'е': 'e', 'к': 'k', 'м': 'm', 'н': 'h', 'о': 'o', 'р': 'p',
	'с': 'c', 'т': 't', 'у': 'y', 'х': 'x', 'і': 'i', 'ј': 'j', 'ѕ': 's', 'ԁ': 'd',
	'ԛ': 'q', 'ԝ': 'w', 'ү': 'y', 'һ': 'h', 'ӏ': 'l',
	// Greek
	'α': 'a', 'β': 'b', 'ε': 'e', 'ζ': 'z', 'η': 'h', 'ι': 'i', 'κ': 'k', 'μ': 'm',
	'ν': 'n', 'ο': 'o', 'ρ': 'p', 'τ': 't', 'υ': 'y', 'χ': 'x',
}

// unescapeJSON decodes the escapes of JSON strings in s (\uXXXX with
// surrogate pairs, \n \r \t as a space, \/ \" \\ as themselves), leaving
// any other backslash as it is.
func unescapeJSON(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		switch n := s[i+1]; n {
		case 'n', 'r', 't':
			b.WriteByte(' ')
			i++
		case '/', '"', '\\':
			b.WriteByte(n)
			i++
		case 'u':
			r, w := hex4(s[i+2:])
			if w == 0 {
				b.WriteByte(c)
				continue
			}
			i += 1 + w
			if utf16.IsSurrogate(r) && strings.HasPrefix(s[i+1:], `\u`) {
				if r2, w2 := hex4(s[i+3:]); w2 > 0 {
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						r = d
						i += 2 + w2
					}
				}
			}
			if utf16.IsSurrogate(r) {
				r = utf8.RuneError
			}
			b.WriteRune(r)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// hex4 reads four hex digits at the start of s: the rune and 4, or 0, 0.
func hex4(s string) (rune, int) {
	if len(s) < 4 {
		return 0, 0
	}
	var r rune
	for i := range 4 {
		c := s[i]
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, 0
		}
	}
	return r, 4
}
