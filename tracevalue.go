package custody

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// tracedArg is one argument value the gate looks for in memories and
// observations, with the comparison of its kind.
type tracedArg struct {
	path  string
	kind  TraceKind
	shown string   // the value as the reasons quote it
	norm  string   // TraceText: the normalised value
	nums  []string // TraceAmount: the canonical numbers it may mean
	mails []string // TraceEmail: the lowercased addresses
}

// fragments are texts of which every record matching the argument holds at
// least one in its GateText: what the store's index is asked for.
func (a tracedArg) fragments() []string {
	switch a.kind {
	case TraceAmount:
		var out []string
		for _, n := range a.nums {
			out = append(out, numberFragments(n)...)
		}
		return uniq(out)
	case TraceEmail:
		out := make([]string, len(a.mails))
		for i, m := range a.mails {
			out[i] = NormalizeValue(m)
		}
		return uniq(out)
	}
	return []string{a.norm}
}

// in reports whether text (a body, key or observation) holds the value.
func (a tracedArg) in(text string) bool {
	switch a.kind {
	case TraceAmount:
		return slices.ContainsFunc(numberTokens(text), func(n string) bool { return slices.Contains(a.nums, n) })
	case TraceEmail:
		return slices.ContainsFunc(emailsIn(text), func(m string) bool { return slices.Contains(a.mails, m) })
	}
	return strings.Contains(NormalizeValue(text), a.norm)
}

// tracedArgs lists the argument values to trace. With declarations, an
// argument is traced when its name, or the name of an object it sits in,
// matches a declared name, as each matching kind; without, every string
// and number is (numbers and numeric strings as amounts). Booleans and
// nulls are never traced; text shorter than MinTracedValue is not either.
func tracedArgs(args map[string]any, specs []TraceSpec, declared bool) []tracedArg {
	var out []tracedArg
	var walk func(path string, kinds []TraceKind, v any)
	walk = func(path string, kinds []TraceKind, v any) {
		switch t := v.(type) {
		case map[string]any:
			for _, k := range sortedKeys(t) {
				walk(joinPath(path, k), kindsFor(k, specs, kinds), t[k])
			}
		case []any:
			for i, e := range t {
				walk(fmt.Sprintf("%s[%d]", path, i), kinds, e)
			}
		case bool, nil:
		default:
			s, isNum := leafText(v)
			if !declared {
				kinds = []TraceKind{TraceText}
				if isNum || isNumeric(s) {
					kinds = []TraceKind{TraceAmount}
				}
			}
			for _, k := range kinds {
				if a, ok := newTracedArg(path, k, s); ok {
					out = append(out, a)
				}
			}
		}
	}
	for _, k := range sortedKeys(args) {
		walk(k, kindsFor(k, specs, nil), args[k])
	}
	return out
}

// newTracedArg prepares the comparison of one value; an amount without a
// number and an e-mail argument without an address are traced as text.
func newTracedArg(path string, kind TraceKind, s string) (tracedArg, bool) {
	a := tracedArg{path: path, kind: kind, shown: s}
	switch kind {
	case TraceAmount:
		if a.nums = numberTokens(s); len(a.nums) > 0 {
			return a, true
		}
	case TraceEmail:
		if a.mails = emailsIn(s); len(a.mails) > 0 {
			return a, true
		}
	}
	a.kind, a.norm = TraceText, NormalizeValue(s)
	return a, len(a.norm) >= MinTracedValue
}

// kindsFor is the kinds declared for an argument named name, or inherited
// (the kinds of the object it sits in) when none is declared for it.
func kindsFor(name string, specs []TraceSpec, inherited []TraceKind) []TraceKind {
	var kinds []TraceKind
	for _, sp := range specs {
		if globMatch(sp.Name, strings.ToLower(name)) && !slices.Contains(kinds, sp.Kind) {
			kinds = append(kinds, sp.Kind)
		}
	}
	if kinds == nil {
		return inherited
	}
	return kinds
}

// leafText is a string or number argument as text, and whether it was a
// number.
func leafText(v any) (string, bool) {
	switch t := v.(type) {
	case string:
		return t, false
	case json.Number:
		return t.String(), true
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64), true
	case float32:
		return strconv.FormatFloat(float64(t), 'f', -1, 32), true
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return fmt.Sprint(t), true
	}
	return fmt.Sprint(v), false
}

var currencyWord = regexp.MustCompile(`^\p{Sc}?\s*(?:[A-Z]{3})?\s*\p{Sc}?$`)

// isNumeric reports whether s is one number, perhaps with a sign and a
// currency symbol or code ("1,200.00", "EUR 950", "-5", "$9.99").
func isNumeric(s string) bool {
	spans := numberSpans(s)
	if len(spans) != 1 || len(readings(s[spans[0][0]:spans[0][1]])) == 0 {
		return false
	}
	rest := strings.TrimSpace(s[:spans[0][0]]) + " " + strings.TrimSpace(s[spans[0][1]:])
	return currencyWord.MatchString(strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(rest), "+-")))
}

// numberSpans finds the runs of ASCII digits and the separators numbers
// are written with: '.' or ',' before more digits, and a space (also a
// no-break or thin one) or an apostrophe before a group of exactly three.
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
		for i < len(text) {
			r, w := utf8.DecodeRuneInString(text[i:])
			if (r == '.' || r == ',') && digit(i+w) {
				for i += w; digit(i); i++ {
				}
				continue
			}
			if strings.ContainsRune(" '\u00a0\u202f\u2009", r) && digit(i+w) && digit(i+w+1) && digit(i+w+2) && !digit(i+w+3) {
				i += w + 3
				continue
			}
			break
		}
		out = append(out, [2]int{start, i})
	}
	return out
}

// numberTokens lists the numbers text holds, canonical (no sign, no leading
// zeros in the integer part, no trailing zeros in the fraction: "1200",
// "9.99"). A token whose separators are ambiguous stands for each reading:
// "1,200" is 1200 and 1.2. Digits joined to other digits by '-', '/' or ':'
// (dates, times, ranges) are not numbers; digits after letters are
// ("ACCT-7777", "EUR950"), as a reader would take them.
func numberTokens(text string) []string {
	var out []string
	for _, sp := range numberSpans(text) {
		if joined(text[:sp[0]], true) || joined(text[sp[1]:], false) {
			continue
		}
		out = append(out, readings(text[sp[0]:sp[1]])...)
	}
	return uniq(out)
}

// joined reports whether the text beside a token (before it, or after)
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

// readings are the canonical numbers a token may mean: with every
// separator a thousands separator (groups of three after the first), or
// with the last '.' or ',' the decimal point and the others thousands
// separators of another character. A token that fits neither (04.03.2022)
// is no number.
func readings(tok string) []string {
	var groups []string
	var seps []rune
	cur := strings.Builder{}
	for _, r := range tok {
		if '0' <= r && r <= '9' {
			cur.WriteRune(r)
			continue
		}
		groups, seps = append(groups, cur.String()), append(seps, r)
		cur.Reset()
	}
	groups = append(groups, cur.String())
	n := len(seps)
	if n == 0 {
		return []string{canonical(groups[0], "")}
	}
	thousandsUpTo := func(k int) bool { // seps[0:k] are one thousands separator
		for i := range k {
			if seps[i] != seps[0] || len(groups[i+1]) != 3 {
				return false
			}
		}
		return true
	}
	var out []string
	if thousandsUpTo(n) {
		out = append(out, canonical(strings.Join(groups, ""), ""))
	}
	if last := seps[n-1]; (last == '.' || last == ',') && thousandsUpTo(n-1) && (n == 1 || seps[0] != last) {
		out = append(out, canonical(strings.Join(groups[:n], ""), groups[n]))
	}
	return out
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

// numberFragments are texts one of which the GateIndexText of any record
// holding the number n (canonical) contains, however it is written: the
// last three digits of the integer part, which no thousands separator
// splits; or, for an integer part of one or two digits, the number's
// marker ("_10_"), which holds three characters a trigram index can look
// up where the digits alone do not.
func numberFragments(n string) []string {
	if intPart, _, _ := strings.Cut(n, "."); len(intPart) >= 3 {
		return []string{intPart[len(intPart)-3:]}
	}
	return []string{numberMarker(n)}
}

// numberMarker is n between underscores, as GateIndexText marks it.
func numberMarker(n string) string { return "_" + n + "_" }

// GateIndexText is what a store indexes of a record for the gate's
// lookups (Tx.Mentioning): its GateText, then the marker of each number
// its body or key holds whose integer part has one or two digits ("_10_",
// "_9.5_"), read as numberTokens reads them, so that the gate finds the
// records holding an amount of 10 through the index instead of reading
// every record with a 1 in it. NormalizeValue drops every underscore: no
// GateText holds a marker, and no value traced as text looks one up.
func GateIndexText(body, key string) string {
	text := GateText(body, key)
	var marks []string
	for _, n := range uniq(append(numberTokens(body), numberTokens(key)...)) {
		if intPart, _, _ := strings.Cut(n, "."); len(intPart) < 3 {
			marks = append(marks, numberMarker(n))
		}
	}
	if len(marks) == 0 {
		return text
	}
	return text + " " + strings.Join(marks, " ")
}

var emailRE = regexp.MustCompile(`[\p{L}\p{N}._%+\-]+@[\p{L}\p{N}\-]+(?:\.[\p{L}\p{N}\-]+)*\.\p{L}{2,}`)

// emailsIn lists the e-mail addresses text holds, lowercased.
func emailsIn(text string) []string {
	found := emailRE.FindAllString(strings.ToLower(text), -1)
	for i, m := range found {
		found[i] = strings.Trim(m, ".")
	}
	return uniq(found)
}

func uniq(s []string) []string {
	slices.Sort(s)
	return slices.Compact(s)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func joinPath(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}
