package poisonbench

import (
	"html"
	"math/big"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf16"
)

// The scripted agent's reading step. A model is shown characters, not
// rendered glyphs, and reads through what a renderer hides or reflows: a
// no-break space is a space to it, a zero-width character or a bidi control
// shows nothing, an IBAN broken across two lines or two sentences is one
// IBAN, "four thousand nine hundred EUR" is an amount. The agent stands for
// such a model, so it reads the same way, with code of its own: it is not
// custody, and must not borrow custody's canonical forms (package canon),
// or a gap in them would hide itself from the benchmark.

// readText is s as the agent reads it: HTML character references and
// JSON string escapes decoded ("&nbsp;", "\u003c"); every space separator
// (no-break, thin, narrow no-break) a plain space; format characters
// (zero-width spaces and joiners, the word joiner, bidi controls, the soft
// hyphen, the byte-order mark) and carriage returns gone; line and paragraph
// separators line breaks; the digits of every script ASCII digits, and the
// Arabic thousands and decimal separators ',' and '.'.
func readText(s string) string {
	if strings.IndexByte(s, '&') >= 0 {
		s = html.UnescapeString(s)
	}
	if strings.IndexByte(s, '\\') >= 0 {
		s = jsonUnescape(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r < 0x80 && r != '\r':
			b.WriteRune(r)
		case r == '\r' || unicode.Is(unicode.Cf, r):
		case r == '\u066c': // Arabic thousands separator
			b.WriteByte(',')
		case r == '\u066b': // Arabic decimal separator
			b.WriteByte('.')
		case unicode.Is(unicode.Zs, r):
			b.WriteByte(' ')
		case unicode.Is(unicode.Zl, r) || unicode.Is(unicode.Zp, r):
			b.WriteByte('\n')
		case unicode.Is(unicode.Nd, r):
			b.WriteByte(byte('0' + digitOf(r)))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// digitOf is the value of a decimal digit of any script: Unicode lays
// every digit set out as ten consecutive code points from zero, and each
// range of its Nd table starts at a zero.
func digitOf(r rune) rune {
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

// jsonUnescape decodes the escapes of JSON strings in s, as a model reads a
// JSON document: \uXXXX (with surrogate pairs) as the character, \n as a
// line break, \t as a space, \" \\ \/ as themselves. Any other backslash
// stays.
func jsonUnescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch c := s[i+1]; c {
		case 'n':
			b.WriteByte('\n')
			i++
		case 't':
			b.WriteByte(' ')
			i++
		case 'r':
			i++
		case '"', '\\', '/':
			b.WriteByte(c)
			i++
		case 'u':
			r, ok := hexRune(s[i+2:])
			if !ok {
				b.WriteByte('\\')
				continue
			}
			i += 5
			if utf16.IsSurrogate(r) && strings.HasPrefix(s[i+1:], `\u`) {
				if r2, ok := hexRune(s[i+3:]); ok {
					r = utf16.DecodeRune(r, r2)
					i += 6
				}
			}
			b.WriteRune(r)
		default:
			b.WriteByte('\\')
		}
	}
	return b.String()
}

func hexRune(s string) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[:4]) {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

var ibanStartRE = regexp.MustCompile(`\b[A-Z]{2}[0-9]{2}`)

// ibanAt reads the IBAN that starts at text[i:] (two capitals and two check
// digits), as its letters and digits, or "": groups of capitals and digits
// however they are set apart (spaces, a line break, or the end of a
// sentence between two groups: "XK05 1212 0123. 4567 8906"). Where the
// groups run on, the IBAN is the longest run of them whose check digits
// hold, as a reader who knows what an IBAN looks like takes it.
func ibanAt(text string, i int) string {
	var groups []string
	for len(groups) < 12 {
		j := i
		for j < len(text) && (isUpper(text[j]) || isDigit(text[j])) {
			j++
		}
		if j == i || (len(groups) > 0 && j < len(text) && isLower(text[j])) {
			break // a word, not a group
		}
		groups = append(groups, text[i:j])
		// Between two groups: spaces or line breaks, after at most one full
		// stop.
		k := j
		if k < len(text) && text[k] == '.' {
			k++
		}
		m := k
		for m < len(text) && (text[m] == ' ' || text[m] == '\n') {
			m++
		}
		if m == k {
			break
		}
		i = m
	}
	for n := len(groups); n > 0; n-- {
		if s := strings.Join(groups[:n], ""); len(s) >= 15 && len(s) <= 34 && mod97(s) == 1 {
			return s
		}
	}
	if s := strings.Join(groups, ""); len(s) >= 15 && len(s) <= 34 {
		return s
	}
	return ""
}

// mod97 is an IBAN's letters and digits, rearranged as ISO 13616 says,
// modulo 97 (1 when its check digits hold).
func mod97(iban string) int {
	r := 0
	for _, c := range []byte(iban[4:] + iban[:4]) {
		switch {
		case isDigit(c):
			r = (r*10 + int(c-'0')) % 97
		case isUpper(c):
			r = (r*100 + int(c-'A') + 10) % 97
		default:
			return -1
		}
	}
	return r
}

func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }
func isLower(c byte) bool { return 'a' <= c && c <= 'z' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// A value found in read text, where it starts.
type found struct {
	at    int
	value string
}

// accounts lists the accounts in read text, in order: the benchmark's
// account numbers (ACCT-1234) and IBANs.
func accounts(text string) []found {
	var out []found
	accts := accountRE.FindAllStringIndex(text, -1)
	starts := ibanStartRE.FindAllStringIndex(text, -1)
	for len(accts) > 0 || len(starts) > 0 {
		if len(starts) == 0 || len(accts) > 0 && accts[0][0] < starts[0][0] {
			out = append(out, found{accts[0][0], text[accts[0][0]:accts[0][1]]})
			accts = accts[1:]
			continue
		}
		if v := ibanAt(text, starts[0][0]); v != "" {
			out = append(out, found{starts[0][0], v})
		}
		starts = starts[1:]
	}
	return out
}

// atRE and dotRE are the bracketed "(at)" and "(dot)" with which people
// write an address to keep it from harvesters; a reader reads them as '@'
// and '.'.
var (
	atRE  = regexp.MustCompile(`(?i)\s*[(\[{]\s*at\s*[)\]}]\s*`)
	dotRE = regexp.MustCompile(`(?i)\s*[(\[{]\s*dot\s*[)\]}]\s*`)
)

// emails lists the e-mail addresses in read text, in order, with "(at)"
// and "(dot)" read as '@' and '.' (where they were, their places are
// those of the text so rewritten).
func emails(text string) []found {
	text = dotRE.ReplaceAllString(atRE.ReplaceAllString(text, "@"), ".")
	var out []found
	for _, loc := range emailRE.FindAllStringIndex(text, -1) {
		out = append(out, found{loc[0], text[loc[0]:loc[1]]})
	}
	return out
}

// currencyRE is a currency a reader takes as money beside a number.
var currencyRE = regexp.MustCompile(`^(?:(?:EUR|USD|GBP|INR|CHF|euros?|dollars?|rupees?)\b|[€$£₹])`)

// amounts lists the amounts of money in read text, in order, each as a
// plain decimal ("1200", "4900", "9.5"): a number with a currency before
// or after it, written in digits with the grouping of any common locale
// ("1,200", "1.200,00", "1 200", "4,90,000"), with a k, m or bn suffix
// ("4.9k"), or in English words ("four thousand nine hundred EUR").
func amounts(text string) []string {
	toks := numberTokens(text)
	slices.SortFunc(toks, func(a, b numberToken) int { return a.start - b.start })
	var out []string
	for _, t := range toks {
		before := strings.TrimRight(text[:t.start], " ")
		last := before[strings.LastIndexAny(before, " \n(")+1:]
		money := currencyRE.MatchString(strings.TrimLeft(text[t.end:], " ")) || last != "" && currencyRE.FindString(last) == last
		if money && t.value != "" {
			out = append(out, t.value)
		}
	}
	return out
}

type numberToken struct {
	start, end int
	value      string
}

var (
	digitsRE  = regexp.MustCompile(`[0-9]+(?:[.,'’][0-9]+| [0-9]{3}\b)*(?:(?:k|m|bn)\b| (?:thousand|million|lakh|crore)\b)?`)
	numWordRE = regexp.MustCompile(`(?i)\b(?:(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand|million|billion|and|a)[\s-]*)+\b`)
)

// numberTokens finds the numbers of read text written in digits or in
// words, with their values.
func numberTokens(text string) []numberToken {
	var out []numberToken
	for _, loc := range digitsRE.FindAllStringIndex(text, -1) {
		out = append(out, numberToken{loc[0], loc[1], digitValue(text[loc[0]:loc[1]])})
	}
	for _, loc := range numWordRE.FindAllStringIndex(text, -1) {
		tok := strings.TrimSpace(text[loc[0]:loc[1]])
		if v := wordValue(tok); v != "" {
			out = append(out, numberToken{loc[0], loc[0] + len(tok), v})
		}
	}
	return out
}

var scaleOf = map[string]int{"k": 3, "thousand": 3, "lakh": 5, "m": 6, "million": 6, "crore": 7, "bn": 9}

// digitValue reads a number written in digits: with both '.' and ',' the
// last is the decimal point; a separator used more than once, or once
// before exactly three digits, groups; once before other than three digits
// it is the decimal point. A scale after it multiplies.
func digitValue(tok string) string {
	scale := 0
	if i := strings.LastIndexAny(tok, "0123456789"); i+1 < len(tok) {
		scale = scaleOf[strings.TrimSpace(tok[i+1:])]
		tok = tok[:i+1]
	}
	tok = strings.NewReplacer("'", "", "’", "", " ", "").Replace(tok)
	intPart, frac := tok, ""
	lastDot, lastComma := strings.LastIndex(tok, "."), strings.LastIndex(tok, ",")
	switch {
	case lastDot >= 0 && lastComma >= 0:
		d := max(lastDot, lastComma)
		intPart, frac = tok[:d], tok[d+1:]
	case lastDot >= 0 || lastComma >= 0:
		sep := tok[max(lastDot, lastComma)]
		if strings.Count(tok, string(sep)) == 1 && len(tok)-max(lastDot, lastComma)-1 != 3 {
			d := max(lastDot, lastComma)
			intPart, frac = tok[:d], tok[d+1:]
		}
	}
	intPart = strings.NewReplacer(".", "", ",", "").Replace(intPart)
	r, ok := new(big.Rat).SetString(intPart + "." + frac + "0")
	if !ok {
		return ""
	}
	r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)))
	return ratString(r)
}

func ratString(r *big.Rat) string {
	s := r.FloatString(6)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

var wordValues = map[string]int64{
	"zero": 0, "one": 1, "a": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
	"ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
	"seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
	"sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
}

// wordValue reads a number written in English words ("four thousand nine
// hundred", "one hundred and twenty-five"), "" when the words are not one.
func wordValue(tok string) string {
	var total, group int64
	counted := false
	for _, w := range strings.FieldsFunc(strings.ToLower(tok), func(r rune) bool { return r == ' ' || r == '-' || r == '\n' }) {
		switch w {
		case "and":
		case "hundred":
			group, counted = max(group, 1)*100, true
		case "thousand", "million", "billion":
			total += max(group, 1) * map[string]int64{"thousand": 1e3, "million": 1e6, "billion": 1e9}[w]
			group, counted = 0, true
		default:
			v, ok := wordValues[w]
			if !ok {
				return ""
			}
			group += v
			counted = counted || w != "a"
		}
	}
	if !counted {
		return ""
	}
	return big.NewInt(total + group).String()
}
