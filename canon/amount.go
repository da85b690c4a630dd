package canon

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Amounts lists the numbers text mentions, each canonical: no sign, no
// leading zeros in the integer part, no trailing zeros in the fraction
// ("1200", "9.99", "0.5"). It reads
//
//   - digits of any script (Fold), with the thousands and decimal
//     separators of the common locales: "1,234.56", "1.234,56",
//     "1 234,56" (a space, no-break or thin space), "1'234.56", and the
//     Indian grouping "12,34,567". A number whose separators are
//     ambiguous stands for each reading: "1,200" is 1200 and 1.2;
//   - a scale after the digits: the suffixes k, m, mn, b and bn written
//     against them ("4.9k", "2bn"), and the words hundred, thousand,
//     million, billion, lakh and crore after them ("4.9 thousand");
//   - numbers written in English words up to the billions ("four thousand
//     nine hundred", "one hundred and twenty-five");
//
// and ignores currency symbols and codes around them ("EUR 950", "$9.99",
// "950€"). Digits joined to other digits by '-', '/' or ':' (dates, times,
// ranges, "2026-12-04", "10:30") are not numbers; digits after letters are
// ("ACCT-7777", "EUR950").
func Amounts(text string) []string {
	f := Fold(text)
	var out []string
	for _, sp := range numberSpans(f) {
		if joined(f[:sp[0]], true) || joined(f[sp[1]:], false) {
			continue
		}
		rs := readings(f[sp[0]:sp[1]])
		if e, ok := scaleAfter(f[sp[1]:]); ok {
			for i, r := range rs {
				rs[i] = shift(r, e)
			}
		}
		out = append(out, rs...)
	}
	out = append(out, wordNumbers(f)...)
	out = slices.DeleteFunc(out, func(n string) bool { return len(n) > MaxAmountLen })
	slices.Sort(out)
	return slices.Compact(out)
}

// MaxAmountLen bounds the canonical numbers Amounts lists: a longer run of
// digits is an identifier, not an amount.
const MaxAmountLen = 40

// numberSpans finds the runs of ASCII digits of folded text with the
// separators numbers are written with: '.' or ',' before more digits, and
// a space or an apostrophe before a group of exactly three.
func numberSpans(text string) [][2]int {
	var out [][2]int
	digit := func(i int) bool { return i < len(text) && '0' <= text[i] && text[i] <= '9' }
	for i := 0; i < len(text); {
		if !digit(i) {
			i++
			continue
		}
		start := i
		for digit(i) {
			i++
		}
		for i+1 < len(text) {
			c := text[i]
			if (c == '.' || c == ',') && digit(i+1) {
				for i++; digit(i); i++ {
				}
				continue
			}
			if (c == ' ' || c == '\'') && digit(i+1) && digit(i+2) && digit(i+3) && !digit(i+4) {
				i += 4
				continue
			}
			break
		}
		out = append(out, [2]int{start, i})
	}
	return out
}

// joined reports whether the text beside a number (before it, or after)
// joins it to other digits with '-', '/' or ':'.
func joined(side string, before bool) bool {
	var sep, next rune
	if before {
		sep, _ = utf8.DecodeLastRuneInString(side)
		if sep == utf8.RuneError {
			return false
		}
		next, _ = utf8.DecodeLastRuneInString(side[:len(side)-utf8.RuneLen(sep)])
	} else {
		var n int
		sep, n = utf8.DecodeRuneInString(side)
		if sep == utf8.RuneError {
			return false
		}
		next, _ = utf8.DecodeRuneInString(side[n:])
	}
	return strings.ContainsRune("-/:", sep) && '0' <= next && next <= '9'
}

// readings are the canonical numbers a token of digits and separators may
// mean: with every separator a grouping one (groups of three after the
// first, or the Indian grouping: groups of two, then a last group of
// three), or with the last '.' or ',' the decimal point and the others
// grouping separators of another character. A token that fits neither
// (04.03.2022) is no number.
func readings(tok string) []string {
	var groups []string
	var seps []byte
	start := 0
	for i := 0; i < len(tok); i++ {
		if c := tok[i]; c < '0' || c > '9' {
			groups, seps = append(groups, tok[start:i]), append(seps, c)
			start = i + 1
		}
	}
	groups = append(groups, tok[start:])
	n := len(seps)
	if n == 0 {
		return []string{canonical(groups[0], "")}
	}
	var out []string
	if grouped(groups, seps) {
		out = append(out, canonical(strings.Join(groups, ""), ""))
	}
	if last := seps[n-1]; (last == '.' || last == ',') && (n == 1 || seps[0] != last && grouped(groups[:n], seps[:n-1])) {
		out = append(out, canonical(strings.Join(groups[:n], ""), groups[n]))
	}
	return out
}

// grouped reports whether groups, joined by seps, are an integer written
// with one grouping separator: every group after the first of three
// digits, or (Indian) the last of three and the ones between of two.
func grouped(groups []string, seps []byte) bool {
	for _, s := range seps {
		if s != seps[0] {
			return false
		}
	}
	western, indian := true, len(groups[0]) <= 2
	for i, g := range groups[1:] {
		western = western && len(g) == 3
		last := i == len(groups)-2
		indian = indian && (last && len(g) == 3 || !last && len(g) == 2)
	}
	return western || indian
}

func canonical(intPart, frac string) string {
	intPart = strings.TrimLeft(intPart, "0")
	if intPart == "" {
		intPart = "0"
	}
	if frac = strings.TrimRight(frac, "0"); frac != "" {
		return intPart + "." + frac
	}
	return intPart
}

// shift multiplies a canonical number by 10^e.
func shift(n string, e int) string {
	intPart, frac, _ := strings.Cut(n, ".")
	for range e {
		if frac != "" {
			intPart, frac = intPart+frac[:1], frac[1:]
		} else {
			intPart += "0"
		}
	}
	return canonical(intPart, frac)
}

// scales are the words that multiply a number written before them, by
// their power of ten; suffixes are those that count only written against
// the digits ("5m" is five million, "5 m" five metres).
var (
	scales   = map[string]int{"hundred": 2, "thousand": 3, "k": 3, "lakh": 5, "lakhs": 5, "million": 6, "mn": 6, "crore": 7, "crores": 7, "billion": 9, "bn": 9}
	suffixes = map[string]int{"k": 3, "m": 6, "mn": 6, "b": 9, "bn": 9}
)

// scaleAfter reads the scale written after a number: a suffix against it,
// or a scale word after one space.
func scaleAfter(rest string) (int, bool) {
	word := func(s string) string {
		i := 0
		for i < len(s) && 'a' <= s[i] && s[i] <= 'z' {
			i++
		}
		if i < len(s) {
			if r, _ := utf8.DecodeRuneInString(s[i:]); inRun(r) {
				return "" // a word of more than ASCII letters
			}
		}
		return s[:i]
	}
	if w := word(rest); w != "" {
		e, ok := suffixes[w]
		return e, ok
	}
	if strings.HasPrefix(rest, " ") {
		e, ok := scales[word(rest[1:])]
		return e, ok
	}
	return 0, false
}

// currencySymbols are the currency symbols s holds.
func currencySymbols(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.Is(unicode.Sc, r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

var currencyRE = regexp.MustCompile(`^[+-]?\s*\p{Sc}?\s*(?:[a-z]{3})?\s*\p{Sc}?\s*$`)

// Amount reads s as one amount alone, with at most a sign and a currency
// symbol or code around it ("1,200.00", "EUR 950", "-5", "$9.99",
// "4.9k"): its readings, or nil when s is anything else.
func Amount(s string) []string {
	f := strings.TrimSpace(Fold(s))
	spans := numberSpans(f)
	if len(spans) != 1 {
		return nil
	}
	sp := spans[0]
	rest := f[sp[1]:]
	if _, ok := scaleAfter(rest); ok {
		rest = strings.TrimLeft(strings.TrimLeft(rest, " "), "abcdefghijklmnopqrstuvwxyz")
	}
	around := strings.TrimSpace(strings.TrimSpace(f[:sp[0]]) + " " + strings.TrimSpace(rest))
	if !currencyRE.MatchString(around) || joined(f[:sp[0]], true) || joined(f[sp[1]:], false) {
		return nil
	}
	// A currency code is written in capitals: "EUR 950" is an amount,
	// "Elm 12" is not.
	if code := strings.Trim(around, "+- "+currencySymbols(around)); code != "" && !strings.Contains(s, strings.ToUpper(code)) {
		return nil
	}
	return Amounts(s)
}
