package custody

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/custody-mem/custody/canon"
)

// tracedArg is one argument value the gate looks for in memories and
// observations, in the canonical form of its kind (package canon).
type tracedArg struct {
	path  string
	kind  TraceKind
	shown string   // the value as the reasons quote it
	ident string   // TraceText, TraceAccount: canon.Ident of the value
	nums  []string // TraceAmount: the canonical numbers it may mean
	mails []string // TraceEmail: the folded addresses
	// untrusted is what the value answers when only untrusted content
	// holds it (TraceSpec.untrusted).
	untrusted string
	// badIBAN: an account shaped like an IBAN whose check digits fail.
	badIBAN bool
	// hidden names the invisible or control characters the value holds
	// (or says it is not UTF-8): what runs is not what a reader sees.
	hidden string
}

// fragments are texts of which the gate index text of every record
// holding the argument (GateIndexText) holds at least one: what the
// store's index is asked for.
func (a tracedArg) fragments() []string {
	switch a.kind {
	case TraceAmount:
		out := make([]string, len(a.nums))
		for i, n := range a.nums {
			out[i] = amountMarker(n)
		}
		return out
	case TraceEmail:
		out := make([]string, len(a.mails))
		for i, m := range a.mails {
			out[i] = emailMarker(m)
		}
		return out
	}
	return []string{a.ident}
}

// in reports whether the text of v (a record's fields, or an
// observation's text) holds the value.
func (a tracedArg) in(v *gateView) bool {
	switch a.kind {
	case TraceAmount:
		return slices.ContainsFunc(v.amounts(), func(n string) bool { return slices.Contains(a.nums, n) })
	case TraceEmail:
		return slices.ContainsFunc(v.emails(), func(m string) bool { return slices.Contains(a.mails, m) })
	}
	return slices.ContainsFunc(v.runners(), func(r canon.Runner) bool { return r.Holds(a.ident) })
}

// tracedArgs lists the argument values to trace. With declarations, an
// argument is traced when its name, or the name of an object it sits in,
// matches a declared name, as each matching spec says; without, every
// string and number is (numbers and numeric strings as amounts, strings
// holding an e-mail address as text and as addresses). Booleans
// and nulls are never traced; text of fewer than minText letters and
// digits is not either.
func tracedArgs(args map[string]any, specs []TraceSpec, declared bool, minText int) []tracedArg {
	var out []tracedArg
	var walk func(path string, matched []TraceSpec, v any)
	walk = func(path string, matched []TraceSpec, v any) {
		switch t := v.(type) {
		case map[string]any:
			for _, k := range sortedKeys(t) {
				walk(joinPath(path, k), specsFor(k, specs, matched), t[k])
			}
		case []any:
			for i, e := range t {
				walk(fmt.Sprintf("%s[%d]", path, i), matched, e)
			}
		case bool, nil:
		default:
			s, isNum := leafText(v)
			if !declared {
				switch {
				case isNum || canon.Amount(s) != nil:
					matched = []TraceSpec{{Kind: TraceAmount}}
				case canon.Emails(s) != nil:
					matched = []TraceSpec{{Kind: TraceText}, {Kind: TraceEmail}}
				default:
					matched = []TraceSpec{{Kind: TraceText}}
				}
			}
			for _, sp := range matched {
				if a, ok := newTracedArg(path, sp, s, isNum, minText); ok {
					out = append(out, a)
				}
			}
		}
	}
	for _, k := range sortedKeys(args) {
		walk(k, specsFor(k, specs, nil), args[k])
	}
	return out
}

// newTracedArg prepares the comparison of one value; an amount without a
// number and an e-mail argument without an address are traced as text.
func newTracedArg(path string, sp TraceSpec, s string, isNum bool, minText int) (tracedArg, bool) {
	a := tracedArg{path: path, kind: sp.Kind, shown: s, untrusted: sp.untrusted(), hidden: hiddenIn(s, sp.Kind == TraceText || sp.Kind == TraceEmail)}
	switch sp.Kind {
	case TraceAmount:
		if isNum {
			a.nums = canon.Amounts(s)
		} else if a.nums = canon.Amount(s); a.nums == nil {
			a.nums = canon.Amounts(s)
		}
		if len(a.nums) > 0 {
			return a, true
		}
	case TraceEmail:
		if a.mails = canon.Emails(s); len(a.mails) > 0 {
			return a, true
		}
	case TraceAccount:
		acct := canon.Account(s)
		a.ident = strings.ToLower(acct)
		if shaped, valid := canon.IBAN(acct); shaped && !valid {
			a.badIBAN = true
		}
		return a, a.ident != "" && len(a.ident) >= minText
	}
	a.kind, a.ident = TraceText, canon.Ident(s)
	return a, a.ident != "" && len(a.ident) >= minText
}

// hiddenIn describes the characters of s a reader does not see: controls
// other than tab and line breaks, and, where format is set, format
// characters (zero-width, bidi controls, soft hyphens); or that s is not
// UTF-8. "" when none. An account or an amount is used in its canonical
// form, as a bank reads it, so a zero-width space in one changes nothing;
// in text (a name, a password) or an address it may.
func hiddenIn(s string, format bool) string {
	if !utf8.ValidString(s) {
		return "bytes that are not UTF-8"
	}
	var found []string
	for _, r := range s {
		if (format && unicode.Is(unicode.Cf, r) || unicode.IsControl(r) && r != '\t' && r != '\n' && r != '\r') && len(found) < 4 {
			if c := fmt.Sprintf("%U", r); !slices.Contains(found, c) {
				found = append(found, c)
			}
		}
	}
	return strings.Join(found, ", ")
}

// specsFor is the specs declared for an argument named name, or inherited
// (those of the object it sits in) when none is declared for it.
func specsFor(name string, specs []TraceSpec, inherited []TraceSpec) []TraceSpec {
	var out []TraceSpec
	for _, sp := range specs {
		if globMatch(sp.Name, strings.ToLower(name)) && !slices.Contains(out, sp) {
			out = append(out, sp)
		}
	}
	if out == nil {
		return inherited
	}
	return out
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
