package custody

import (
	"slices"
	"strings"
	"testing"
)

// Number tokens are read as a reader would, dates and times are not
// numbers, and ambiguous separators stand for each reading.
func TestNumberTokens(t *testing.T) {
	for text, want := range map[string][]string{
		"pay 1,200.00 now":          {"1200"},
		"pay 1.200,50 EUR":          {"1200.5"},
		"1 200 and 1'300":           {"1200", "1300"},
		"1,200":                     {"1.2", "1200"},
		"9.99 to ACCT-7777 5 times": {"5", "7777", "9.99"},
		"EUR950, $12":               {"12", "950"},
		"on 2022-03-04 at 10:30":    nil,
		"on 04.03.2022":             nil,
		"refund -42.50":             {"42.5"},
		"007 and 0.50":              {"0.5", "7"},
		"1,234,567.8":               {"1234567.8"},
		"no numbers here":           nil,
		"range 100-200, ratio 3/4":  nil,
		"five, 10 and 20.":          {"10", "20"},
		// Groups of four are not thousands: each run is read alone.
		"IBAN DE89 3704 0044 0532 0130": {"130", "3704", "44", "532", "89"},
	} {
		got := numberTokens(text)
		if !slices.Equal(got, want) {
			t.Errorf("numberTokens(%q) = %q, want %q", text, got, want)
		}
	}
}

// Every way of writing a number leaves one of its fragments in the gate
// index text, so the index finds every record the comparison would
// accept; and every fragment is long enough for a trigram index.
func TestNumberFragmentsCoverWritings(t *testing.T) {
	for n, writings := range map[string][]string{
		"1200":   {"1200", "1,200", "1.200", "1 200", "1'200", "1,200.00", "1.200,00", "01200"},
		"9.99":   {"9.99", "9,99", "9.990", "009.99"},
		"5":      {"5", "5.00", "5,0", "EUR5"},
		"0.5":    {"0.5", "0,50"},
		"1005.5": {"1,005.50", "1.005,5", "1005.5"},
	} {
		for _, w := range writings {
			if !slices.Contains(numberTokens(w), n) {
				t.Errorf("%q does not read as %s: %q", w, n, numberTokens(w))
				continue
			}
			gt := GateIndexText("pay "+w+" now", "")
			if !slices.ContainsFunc(numberFragments(n), func(f string) bool { return strings.Contains(gt, f) }) {
				t.Errorf("gate index text %q holds none of %s's fragments %q", gt, n, numberFragments(n))
			}
			for _, f := range numberFragments(n) {
				if len(f) < 3 {
					t.Errorf("fragment %q of %s: shorter than a trigram", f, n)
				}
			}
		}
	}
}

// The gate index text marks the numbers of one or two digits before the
// point, each once, and only those; the GateText before them is unchanged.
func TestGateIndexText(t *testing.T) {
	for _, c := range []struct{ body, key, want string }{
		{"pay 10 EUR, then 10 more", "", "pay10eur,then10more  _10_"},
		{"rent 950 in 2010", "", "rent950in2010 "},
		{"9,5 kg and 04.03.2022", "fee.5", "9,5kgand04032022 fee5 _5_ _9.5_"},
		{"no numbers", "payee_account", "nonumbers payeeaccount"},
		{"ACCT-7 and 1,200", "", "acct7and1,200  _1.2_ _7_"},
	} {
		if got := GateIndexText(c.body, c.key); got != c.want {
			t.Errorf("GateIndexText(%q, %q) = %q, want %q", c.body, c.key, got, c.want)
		}
		if got := GateIndexText(c.body, c.key); !strings.HasPrefix(got, GateText(c.body, c.key)) {
			t.Errorf("GateIndexText(%q, %q) = %q does not begin with the GateText", c.body, c.key, got)
		}
	}
}

// Which arguments are traced, and as what.
func TestTracedArgs(t *testing.T) {
	specs := []TraceSpec{{"*recipient*", TraceText}, {"amount", TraceAmount}, {"to", TraceEmail}}
	args := map[string]any{
		"recipient": map[string]any{"iban": "DE89 3704", "name": "Bob"},
		"amount":    "1,200.00", "date": "2022-03-04", "urgent": true, "to": []any{"a@b.example", "no address here"},
	}
	var got []string
	for _, a := range tracedArgs(args, specs, true) {
		got = append(got, a.path+":"+string(a.kind))
	}
	want := []string{"amount:amount", "recipient.iban:text", "to[0]:email", "to[1]:text"}
	if !slices.Equal(got, want) {
		t.Errorf("declared: %q, want %q", got, want)
	}
	got = nil
	for _, a := range tracedArgs(args, nil, false) {
		got = append(got, a.path+":"+string(a.kind))
	}
	want = []string{"amount:amount", "date:text", "recipient.iban:text", "to[0]:text", "to[1]:text"}
	if !slices.Equal(got, want) {
		t.Errorf("undeclared: %q, want %q", got, want)
	}
}
