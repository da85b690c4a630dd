package canon

import (
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// genIBAN draws a valid IBAN: a country code, check digits computed for
// a BBAN of 11 to 30 digits and capital letters.
func genIBAN(t *rapid.T, label string) string {
	letters := "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	cc := rapid.SampledFrom([]string{"DE", "FR", "GB", "XK", "NL", "CH", "IT"}).Draw(t, label+"cc")
	n := rapid.IntRange(11, 30).Draw(t, label+"len")
	var bban strings.Builder
	for i := range n {
		if rapid.IntRange(0, 4).Draw(t, fmt.Sprintf("%s%d", label, i)) == 0 {
			bban.WriteByte(letters[rapid.IntRange(0, 25).Draw(t, fmt.Sprintf("%sl%d", label, i))])
		} else {
			bban.WriteByte(byte('0' + rapid.IntRange(0, 9).Draw(t, fmt.Sprintf("%sd%d", label, i))))
		}
	}
	// check = 98 - (BBAN + CC + "00" as digits) mod 97
	var b strings.Builder
	for _, c := range bban.String() + cc + "00" {
		if c >= 'A' {
			b.WriteString(fmt.Sprint(c - 'A' + 10))
		} else {
			b.WriteRune(c)
		}
	}
	m, _ := new(big.Int).SetString(b.String(), 10)
	check := 98 - new(big.Int).Mod(m, big.NewInt(97)).Int64()
	return fmt.Sprintf("%s%02d%s", cc, check, bban.String())
}

// separators are what content puts between the groups of an identifier.
var separators = []string{" ", "\u00a0", "\u202f", "\u2009", "\u200b", "\u00ad", "\r\n", "\n", "-", "\u2013", "\u2014", "/", ".", "_", "\u200e", "\u2060", ". ", "&nbsp;", "\\u00a0"}

// spellIdent writes id in groups of 1 to 6 characters joined by drawn
// separators, each character in drawn case or fullwidth.
func spellIdent(t *rapid.T, id string) string {
	var b strings.Builder
	for i := 0; i < len(id); {
		n := min(rapid.IntRange(1, 6).Draw(t, "group"), len(id)-i)
		for _, c := range id[i : i+n] {
			switch rapid.IntRange(0, 3).Draw(t, "form") {
			case 0:
				b.WriteString(strings.ToLower(string(c)))
			case 1:
				b.WriteRune(c - '!' + '！') // fullwidth
			default:
				b.WriteRune(c)
			}
		}
		i += n
		if i < len(id) {
			b.WriteString(rapid.SampledFrom(separators).Draw(t, "sep"))
		}
	}
	return b.String()
}

func TestPropertyIBANSpellings(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := genIBAN(t, "a")
		if shaped, valid := IBAN(a); !shaped || !valid {
			t.Fatalf("generated %s is not a valid IBAN", a)
		}
		s := spellIdent(t, a)
		if got := Account(s); got != a {
			t.Fatalf("Account(%q) = %q, want %q", s, got, a)
		}
		if text := "Pay the rent to " + s + " from now on."; !Holds(text, Ident(a)) {
			t.Fatalf("%q does not hold %s", text, a)
		}
		b := genIBAN(t, "b")
		if a == b {
			return
		}
		if Account(s) == Account(spellIdent(t, b)) {
			t.Fatalf("two IBANs %s and %s have one canonical form", a, b)
		}
		if len(a) == len(b) && Holds("Pay "+s+" now", Ident(b)) {
			t.Fatalf("a spelling of %s holds %s", a, b)
		}
	})
}

// An amount drawn as a whole number of cents.
func genCents(t *rapid.T, label string) int64 {
	return rapid.Int64Range(0, 99_999_999_999).Draw(t, label)
}

func canonicalCents(c int64) string {
	return canonical(fmt.Sprint(c/100), fmt.Sprintf("%02d", c%100))
}

// group writes n's digits in groups (western: threes; indian: a last
// three and twos before) joined by sep.
func group(n int64, sep string, indian bool) string {
	s := fmt.Sprint(n)
	var parts []string
	size := 3
	for len(s) > size {
		parts = append([]string{s[len(s)-size:]}, parts...)
		s = s[:len(s)-size]
		if indian {
			size = 2
		}
	}
	return strings.Join(append([]string{s}, parts...), sep)
}

// digitSets are zeros of decimal digit sets content writes numbers in.
var digitSets = []rune{'0', '٠', '۰', '०', '০', '๐', '０', '𝟎'}

func inDigits(s string, zero rune) string {
	return strings.Map(func(r rune) rune {
		if '0' <= r && r <= '9' {
			return zero + r - '0'
		}
		return r
	}, s)
}

// spellAmount writes cents as content writes an amount, with cents always
// shown: the notation of one locale, a digit set and a currency.
func spellAmount(t *rapid.T, cents int64) string {
	whole, frac := cents/100, fmt.Sprintf("%02d", cents%100)
	var s string
	switch rapid.IntRange(0, 6).Draw(t, "notation") {
	case 0:
		s = group(whole, ",", false) + "." + frac
	case 1:
		s = group(whole, ".", false) + "," + frac
	case 2:
		s = group(whole, rapid.SampledFrom([]string{" ", "\u00a0", "\u202f", "\u2009"}).Draw(t, "space"), false) + "," + frac
	case 3:
		s = group(whole, ",", true) + "." + frac
	case 4:
		s = group(whole, "'", false) + "." + frac
	case 5:
		s = fmt.Sprint(whole) + "." + frac
	default:
		s = fmt.Sprint(whole) + "," + frac
	}
	s = inDigits(s, rapid.SampledFrom(digitSets).Draw(t, "digits"))
	cur := rapid.SampledFrom([]string{"", "EUR ", "$", "USD ", "€", " €", " CHF", "₹"}).Draw(t, "currency")
	if strings.HasPrefix(cur, " ") || cur == "€" && rapid.Bool().Draw(t, "after") {
		return s + cur
	}
	return cur + s
}

var canonicalRE = regexp.MustCompile(`^(0|[1-9][0-9]*)(\.[0-9]*[1-9])?$`)

func TestPropertyAmountSpellings(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := genCents(t, "a")
		s := spellAmount(t, a)
		got := Amounts("Total due: " + s + ", thank you")
		want := canonicalCents(a)
		if !slices.Contains(got, want) {
			t.Fatalf("Amounts(%q) = %q, want it to hold %s", s, got, want)
		}
		// With the cents written, a notation has one reading only unless it
		// is ambiguous by nature (a lone separator before three digits
		// reads as grouping too): never another amount's.
		b := genCents(t, "b")
		if b != a && slices.Contains(got, canonicalCents(b)) && !ambiguous(s) {
			t.Fatalf("Amounts(%q) = %q holds %s, another amount", s, got, canonicalCents(b))
		}
	})
}

// ambiguous reports whether an amount spelled with its cents also reads
// as a whole number: never, since cents are two digits and a grouping
// separator is followed by three.
func ambiguous(string) bool { return false }

func TestPropertyWholeAmountsInWords(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.Int64Range(0, 999_999_999_999).Draw(t, "n")
		w := words(n)
		if rapid.Bool().Draw(t, "title") {
			w = strings.ToUpper(w[:1]) + w[1:]
		}
		if got := Amounts("Transfer " + w + " euros today."); !slices.Contains(got, fmt.Sprint(n)) {
			t.Fatalf("Amounts(%q) = %q, want it to hold %d", w, got, n)
		}
	})
}

func TestPropertyScaledAmounts(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tenths := rapid.Int64Range(1, 99_999).Draw(t, "tenths")
		s := canonical(fmt.Sprint(tenths/10), fmt.Sprint(tenths%10))
		suffix, e := rapid.SampledFrom([]string{"k", "K", " thousand", "m", "M", "mn", " million", "bn", " billion"}).Draw(t, "scale"), 0
		switch strings.ToLower(strings.TrimSpace(suffix)) {
		case "k", "thousand":
			e = 3
		case "m", "mn", "million":
			e = 6
		default:
			e = 9
		}
		want := shift(s, e)
		if got := Amounts("about " + s + suffix + " in all"); !slices.Contains(got, want) {
			t.Fatalf("Amounts(%q) = %q, want it to hold %s", s+suffix, got, want)
		}
	})
}

// words writes n in English words, as a person would.
func words(n int64) string {
	if n == 0 {
		return "zero"
	}
	ones := strings.Fields("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen")
	tens := strings.Fields("_ _ twenty thirty forty fifty sixty seventy eighty ninety")
	under1000 := func(n int64) string {
		var parts []string
		if n >= 100 {
			parts = append(parts, ones[n/100]+" hundred")
			n %= 100
			if n > 0 {
				parts = append(parts, "and")
			}
		}
		switch {
		case n >= 20 && n%10 != 0:
			parts = append(parts, tens[n/10]+"-"+ones[n%10])
		case n >= 20:
			parts = append(parts, tens[n/10])
		case n > 0:
			parts = append(parts, ones[n])
		}
		return strings.Join(parts, " ")
	}
	var parts []string
	for _, sc := range []struct {
		v    int64
		name string
	}{{1e9, "billion"}, {1e6, "million"}, {1e3, "thousand"}} {
		if n >= sc.v {
			parts = append(parts, under1000(n/sc.v)+" "+sc.name)
			n %= sc.v
		}
	}
	if n > 0 {
		parts = append(parts, under1000(n))
	}
	return strings.Join(parts, " ")
}

func TestPropertyEmailSpellings(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		local := rapid.StringMatching(`[a-z][a-z0-9]{0,8}(-[a-z0-9]{1,6})?`).Draw(t, "local")
		host := rapid.StringMatching(`[a-z][a-z0-9]{1,10}`).Draw(t, "host")
		tld := rapid.SampledFrom([]string{"example", "com", "org", "de"}).Draw(t, "tld")
		addr := local + "@" + host + "." + tld
		at := rapid.SampledFrom([]string{"@", " (at) ", "[at]", " at ", " @ ", "{at}", "＠"}).Draw(t, "at")
		dot := rapid.SampledFrom([]string{".", " (dot) ", "[dot]", " dot ", "．"}).Draw(t, "dot")
		spelled := local + at + host + dot + tld
		if rapid.Bool().Draw(t, "upper") {
			spelled = strings.ToUpper(spelled)
		}
		if rapid.Bool().Draw(t, "invisible") { // a reader does not see it
			rs := []rune(spelled)
			i := rapid.IntRange(1, len(rs)-1).Draw(t, "where")
			spelled = string(rs[:i]) + rapid.SampledFrom([]string{"\u200b", "\u200c", "\u200d", "\u2060", "\u00ad", "\u200e", "\u202e", "\ufeff", "\ufe0f"}).Draw(t, "char") + string(rs[i:])
		}
		wrap := rapid.SampledFrom([]string{"%s", "Billing <%s>", "mailto:%s", "Billing \\u003c%s\\u003e", "Billing &lt;%s&gt;"}).Draw(t, "wrap")
		text := "Please write to " + fmt.Sprintf(wrap, spelled) + " for refunds"
		if got := Emails(text); !slices.Contains(got, addr) {
			t.Fatalf("Emails(%q) = %q, want it to hold %s", text, got, addr)
		}
	})
}
