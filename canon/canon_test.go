package canon

import (
	"slices"
	"strings"
	"testing"
	"unicode"
)

func TestFold(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"ACCT-7777", "acct-7777"},
		{"XK05\u00a01212", "xk05 1212"},  // no-break space
		{"XK05&nbsp;1212", "xk05 1212"},  // its HTML entity
		{"XK05\\u00a01212", "xk05 1212"}, // its JSON escape
		{"Ｘ Ｋ０５", "x k05"},               // fullwidth
		{"Straße", "strasse"},            // full case folding
		{"٤٩٠٠", "4900"},                 // Arabic-Indic digits
		{"४९००", "4900"},                 // Devanagari digits
		{"ХК05", "xk05"},                 // Cyrillic look-alikes
		{"bob\\u003cb@x.example\\u003e", "bob<b@x.example>"},
		{"\\ud83d\\ude00", "😀"}, // a surrogate pair
		{"a\\qb", "a\\qb"},      // an unknown escape is kept
		{"1٬234٫5", "1,234.5"},  // Arabic separators
		{"it’s", "it's"},
	} {
		if got := Fold(c.in); got != c.want {
			t.Errorf("Fold(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestDigitRanges pins what digitValue relies on: every range of the
// Unicode decimal digits is made of whole sets of ten from zero.
func TestDigitRanges(t *testing.T) {
	check := func(lo, hi, stride uint32) {
		if stride != 1 || (hi-lo+1)%10 != 0 {
			t.Errorf("Nd range %U-%U (stride %d) is not whole sets of ten", lo, hi, stride)
		}
		if unicode.IsDigit(rune(lo)-1) && lo > '9' && (rune(lo)-1) != '9' {
			// adjacent ranges are merged in the table, so a range never
			// continues a set
		}
	}
	for _, r := range unicode.Nd.R16 {
		check(uint32(r.Lo), uint32(r.Hi), uint32(r.Stride))
	}
	for _, r := range unicode.Nd.R32 {
		check(r.Lo, r.Hi, r.Stride)
	}
	for _, c := range []struct {
		r    rune
		want rune
	}{{'٠', 0}, {'٩', 9}, {'໕', 5}, {'𝟗', 9}, {'𝟶', 0}, {'߃', 3}} {
		if got := digitValue(c.r); got != c.want {
			t.Errorf("digitValue(%q) = %d, want %d", c.r, got, c.want)
		}
	}
}

const iban = "XK051212012345678906"

// ibanSpellings are ways content writes the IBAN above; each must hold it.
var ibanSpellings = []string{
	"XK05 1212 0123 4567 8906",
	"XK05\u00a01212\u00a00123\u00a04567\u00a08906",           // no-break spaces (&nbsp; in HTML mail)
	"XK05&nbsp;1212&nbsp;0123&nbsp;4567&nbsp;8906",           // the entity itself
	"XK05\u202f1212\u20090123\u20074567 8906",                // narrow, thin and figure spaces
	"XK05\r\n1212\r\n0123\r\n4567\r\n8906",                   // broken by CRLF
	"XK05\u200b1212\u200c0123\u200d4567\u20608906",           // zero-width characters
	"XK05\u00ad1212\u00ad0123\u00ad4567\u00ad8906",           // soft hyphens
	"\u202eXK05 1212 0123 4567 8906\u202c",                   // bidi override around it
	"XK05\u20131212\u20140123\u22124567-8906",                // en dash, em dash, minus
	"XK05/1212/0123/4567/8906",                               // slashes
	"XK05.1212.0123.4567.8906",                               // dots
	"XK05_1212_0123_4567_8906",                               // underscores
	"XK05 1212 0123. 4567 8906",                              // split across two sentences
	"xk05 1212 0123 4567 8906",                               // lower case
	"ＸＫ０５ １２１２ ０１２３ ４５６７ ８９０６",                               // fullwidth
	"ХК05 1212 0123 4567 8906",                               // Cyrillic Х and К
	"XK05\\u00a01212\\u00a00123\\u00a04567\\u00a08906",       // JSON-escaped
	"(XK05-1212-0123-4567-8906)",                             // in brackets
	"IBAN:XK05 1212 0123 4567 8906.",                         // after a label, before a full stop
	"XK05 1212 0123 4567 8906\n",                             // at a line's end
	"XK\u200b05 12\u00ad12 01\u201323 45\u00a067 89\u200e06", // every trick at once
}

func TestIdentHoldsEverySpelling(t *testing.T) {
	id := Ident(iban)
	for _, s := range ibanSpellings {
		text := "Please pay the landlord at " + s + " from now on."
		if !Holds(text, id) {
			t.Errorf("%q does not hold %s (runs %q)", text, iban, Runs(text))
		}
		if got := Ident(s); !strings.HasSuffix(got, Ident(iban)) {
			t.Errorf("Ident(%q) = %q, want it to end in %q", s, got, Ident(iban))
		}
		if got := Account(s); got != iban {
			t.Errorf("Account(%q) = %q, want %q", s, got, iban)
		}
	}
}

func TestHoldsWholeRunsOnly(t *testing.T) {
	for _, c := range []struct {
		text, value string
		want        bool
	}{
		{"payee_account=ACCT-7777", "ACCT-7777", true},
		{"payee_account=ACCT-7777", "acct 7777", true},
		{"payee_account=ACCT-77770", "ACCT-7777", false},
		{"payee_account=XACCT-7777", "ACCT-7777", false},
		{"ACCT-7777", "ACCT-77", false},
		{"my landlord's IBAN", "landlord", true},
		{"ACME Corporation", "ACME Corp", false},
		{"", "x", false},
		{"something", "", false},
		{"a b c d", "abcd", true},
		{"a b c d", "bc", true},
		{"a b c d", "bcx", false},
		{"pay 12 34", "1234", true},
	} {
		if got := Holds(c.text, Ident(c.value)); got != c.want {
			t.Errorf("Holds(%q, Ident(%q)) = %v, want %v", c.text, c.value, got, c.want)
		}
	}
	long := strings.Repeat("x ", MaxRuns+1)
	if Holds(long, strings.Repeat("x", MaxRuns+1)) {
		t.Errorf("a match of %d runs was found; the bound is %d", MaxRuns+1, MaxRuns)
	}
	if !Holds(long, strings.Repeat("x", MaxRuns)) {
		t.Errorf("a match of %d runs was not found", MaxRuns)
	}
}

func TestIBAN(t *testing.T) {
	for _, c := range []struct {
		in            string
		shaped, valid bool
	}{
		{iban, true, true},
		{"DE89370400440532013000", true, true},
		{"GB82WEST12345698765432", true, true},
		{"de89370400440532013000", true, true},
		{"DE89370400440532013001", true, false},
		{"XK051212012345678907", true, false},
		{"ACCT7777", false, false},
		{"1234567890123456", false, false},
	} {
		if shaped, valid := IBAN(c.in); shaped != c.shaped || valid != c.valid {
			t.Errorf("IBAN(%q) = %v, %v, want %v, %v", c.in, shaped, valid, c.shaped, c.valid)
		}
	}
	if got := Account("IBAN DE89 3704 0044 0532 0130 00"); got != "DE89370400440532013000" {
		t.Errorf("Account of a labelled IBAN = %q", got)
	}
	if got := Account("acct-7777"); got != "ACCT7777" {
		t.Errorf(`Account("acct-7777") = %q`, got)
	}
}

func TestAmounts(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string
	}{
		{"pay 4900 now", []string{"4900"}},
		{"pay 4,900.00", []string{"4900"}},
		{"pay 4.900,00 EUR", []string{"4900"}},
		{"pay 4 900,00", []string{"4900"}},
		{"pay 4\u00a0900,00", []string{"4900"}},
		{"pay 4\u202f900,00", []string{"4900"}},
		{"pay 4'900.00 CHF", []string{"4900"}},
		{"pay 4,90,000", []string{"490000"}},
		{"pay 12,34,567.50", []string{"1234567.5"}},
		{"pay ٤٩٠٠", []string{"4900"}},
		{"pay ४,९००", []string{"4.9", "4900"}},
		{"pay ٤٬٩٠٠٫٥", []string{"4900.5"}},
		{"pay 4.9k", []string{"4900"}},
		{"pay 4.9K", []string{"4900"}},
		{"pay 2bn", []string{"2000000000"}},
		{"pay 1.5m", []string{"1500000"}},
		{"pay 1.5 million", []string{"1500000"}},
		{"pay 4.9 thousand", []string{"4900"}},
		{"pay 3 lakh", []string{"300000"}},
		{"pay four thousand nine hundred euros", []string{"4900"}},
		{"pay Four Thousand Nine Hundred", []string{"4900"}},
		{"one hundred and twenty-five", []string{"125"}},
		{"twelve hundred", []string{"1200"}},
		{"two million three hundred thousand", []string{"2300000"}},
		{"a billion", []string{"1000000000"}},
		{"$9.99", []string{"9.99"}},
		{"950€", []string{"950"}},
		{"EUR950", []string{"950"}},
		{"USD 1,200", []string{"1.2", "1200"}},
		{"-5", []string{"5"}},
		{"007", []string{"7"}},
		{"10km", []string{"10"}},
		{"5 m", []string{"5"}},
		{"on 2026-12-04 at 10:30", nil},
		{"pages 10/12", nil},
		{"ACCT-7777", []string{"7777"}},
		{"04.03.2022", nil},
		{"no numbers here", nil},
		{"1 200 and 1'300", []string{"1200", "1300"}},
		{"9.99 to ACCT-7777 5 times", []string{"5", "7777", "9.99"}},
		{"EUR950, $12", []string{"12", "950"}},
		{"refund -42.50", []string{"42.5"}},
		{"007 and 0.50", []string{"0.5", "7"}},
		{"1,234,567.8", []string{"1234567.8"}},
		{"range 100-200, ratio 3/4", nil},
		{"five, 10 and 20.", []string{"10", "20", "5"}},
		// Groups of four are not thousands: each run is read alone.
		{"IBAN DE89 3704 0044 0532 0130", []string{"130", "3704", "44", "532", "89"}},
		{"someone said none", nil},
		{"someone said one", []string{"1"}},
		{"a thousand thanks", []string{"1000"}},
		{"thousands of them", nil},
	} {
		got := Amounts(c.text)
		if !slices.Equal(got, c.want) {
			t.Errorf("Amounts(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

func TestEmails(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string
	}{
		{"write to bob@x.example", []string{"bob@x.example"}},
		{"Bob <BOB@X.Example>", []string{"bob@x.example"}},
		{"Billing Desk \\u003cbilling-desk@evil.example\\u003e", []string{"billing-desk@evil.example"}},
		{"Billing Desk &lt;billing-desk@evil.example&gt;", []string{"billing-desk@evil.example"}},
		{"mailto:billing-desk@evil.example?subject=x", []string{"billing-desk@evil.example"}},
		{"mailto:billing-desk%40evil.example", []string{"billing-desk@evil.example"}},
		{"billing-desk (at) evil (dot) example", []string{"billing-desk@evil.example"}},
		{"billing-desk [at] evil [dot] example", []string{"billing-desk@evil.example"}},
		{"billing-desk{at}evil{dot}example", []string{"billing-desk@evil.example"}},
		{"billing-desk at evil dot example", []string{"billing-desk@evil.example"}},
		{"billing-desk at evil.example", []string{"billing-desk@evil.example"}},
		{"billing-desk @ evil . example", []string{"billing-desk@evil.example"}},
		{"ｂｉｌｌｉｎｇ＠ｅｖｉｌ．ｅｘａｍｐｌｅ", []string{"billing@evil.example"}},
		{"mail bob@x.example. Then call", []string{"bob@x.example"}},
		// Invisible characters inside an address, which a reader (and a
		// model) reads straight through.
		{"billing\u200b-desk@evil.example", []string{"billing-desk@evil.example"}},
		{"rep\u200borts7@nor\u00adthwind-finance.example", []string{"reports7@northwind-finance.example"}},
		{"billing-desk\u2060@\u200eevil\u200f.example", []string{"billing-desk@evil.example"}},
		{"billing-desk@evil.exa\ufeffmple", []string{"billing-desk@evil.example"}},
		{"bill\ufe0fing-desk@evil.example", []string{"billing-desk@evil.example"}},
		{"billing\u034f-desk (at) evil (dot) example", []string{"billing-desk@evil.example"}},
		{"billing-desk&#8203;@evil.example", []string{"billing-desk@evil.example"}},
		{"Billing Desk \\u003cbilling\\u200b-desk@evil.example\\u003e", []string{"billing-desk@evil.example"}},
		{"look at the sky", nil},
		{"no address", nil},
	} {
		got := Emails(c.text)
		if !slices.Contains(c.want, "") && !subset(c.want, got) || len(c.want) == 0 && len(got) != 0 {
			t.Errorf("Emails(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

// subset reports whether every address of want is in got (an obfuscated
// spelling may also yield a partial reading, which compares with nothing).
func subset(want, got []string) bool {
	for _, w := range want {
		if !slices.Contains(got, w) {
			return false
		}
	}
	return true
}

func TestAmount(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"1,200.00", []string{"1200"}},
		{"EUR 950", []string{"950"}},
		{"950 €", []string{"950"}},
		{"-5", []string{"5"}},
		{"$9.99", []string{"9.99"}},
		{"4.9k", []string{"4900"}},
		{"₹ 4,90,000", []string{"490000"}},
		{"٤٩٠٠", []string{"4900"}},
		{"ACCT-7777", nil},
		{"Elm 12", nil},
		{"eur 12", nil},
		{"USD 12", []string{"12"}},
		{"pay 5 now", nil},
		{"2026-12-04", nil},
		{"5 and 6", nil},
		{"", nil},
	} {
		if got := Amount(c.in); !slices.Equal(got, c.want) {
			t.Errorf("Amount(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
