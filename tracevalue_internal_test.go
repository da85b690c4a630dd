package custody

import (
	"slices"
	"strings"
	"testing"
)

// Every way of writing an amount leaves its marker in the gate index
// text, so the index finds every record the comparison would accept; and
// every marker is long enough for a trigram index.
func TestAmountMarkersCoverWritings(t *testing.T) {
	for n, writings := range map[string][]string{
		"1200":   {"1200", "1,200", "1.200", "1 200", "1\u00a0200", "1'200", "1,200.00", "1.200,00", "01200", "1.2k", "twelve hundred", "١٢٠٠"},
		"9.99":   {"9.99", "9,99", "9.990", "009.99", "٩٫٩٩"},
		"5":      {"5", "5.00", "5,0", "EUR5", "five"},
		"0.5":    {"0.5", "0,50"},
		"1005.5": {"1,005.50", "1.005,5", "1005.5"},
		"490000": {"4,90,000", "4.9 lakh", "four hundred and ninety thousand"},
	} {
		for _, w := range writings {
			gt := GateIndexText("pay "+w+" now", "")
			if !strings.Contains(gt, amountMarker(n)) {
				t.Errorf("gate index text %q of %q lacks the marker of %s", gt, w, n)
			}
		}
		if len(amountMarker(n)) < 3 {
			t.Errorf("marker %q of %s: shorter than a trigram", amountMarker(n), n)
		}
	}
}

// The gate index text holds each field's canonical letters and digits,
// separated, then the markers of its amounts and e-mail addresses, each
// once.
func TestGateIndexText(t *testing.T) {
	for _, c := range []struct {
		fields []string
		want   string
	}{
		{[]string{"pay 10 EUR, then 10 more", ""}, "pay10eurthen10more  _10_"},
		{[]string{"rent 950 in 2010", ""}, "rent950in2010  _2010_ _950_"},
		{[]string{"IBAN XK05\u00a01212\u200b0123", "payee_account"}, "ibanxk0512120123 payeeaccount _1212_ _123_ _5_"},
		{[]string{"write to Bob <BOB@x.example>", "", "inbox"}, "writetobobbobxexample  inbox <bob@x.example>"},
		{[]string{"no numbers"}, "nonumbers"},
	} {
		if got := GateIndexText(c.fields...); got != c.want {
			t.Errorf("GateIndexText(%q) = %q, want %q", c.fields, got, c.want)
		}
	}
	r := &Record{Body: "b", Key: "k", Namespace: "n", SourceRef: "s", Metadata: Metadata{"z": "last", "a": "first"}}
	if got, want := RecordGateIndex(r), "b k n s first last"; got != want {
		t.Errorf("RecordGateIndex = %q, want %q", got, want)
	}
	r.Erased = true
	if got, want := RecordGateIndex(r), " k n s"; got != want {
		t.Errorf("RecordGateIndex of an erased record = %q, want %q", got, want)
	}
}

// Which arguments are traced, and as what.
func TestTracedArgs(t *testing.T) {
	specs := []TraceSpec{{Name: "*recipient*", Kind: TraceAccount}, {Name: "amount", Kind: TraceAmount}, {Name: "to", Kind: TraceEmail}, {Name: "street", Kind: TraceText, Untrusted: GateConfirm}}
	args := map[string]any{
		"recipient": map[string]any{"iban": "DE89 3704", "name": "Bob"},
		"amount":    "1,200.00", "date": "2022-03-04", "urgent": true, "to": []any{"a@b.example", "no address here"}, "street": "Elm 12",
	}
	var got []string
	for _, a := range tracedArgs(args, specs, true, MinTracedValue) {
		got = append(got, a.path+":"+string(a.kind)+":"+a.untrusted)
	}
	want := []string{"amount:amount:confirm", "recipient.iban:account:deny", "street:text:confirm", "to[0]:email:deny", "to[1]:text:deny"}
	if !slices.Equal(got, want) {
		t.Errorf("declared: %q, want %q", got, want)
	}
	got = nil
	for _, a := range tracedArgs(args, nil, false, MinTracedValue) {
		got = append(got, a.path+":"+string(a.kind))
	}
	want = []string{"amount:amount", "date:text", "recipient.iban:text", "street:text", "to[0]:text", "to[0]:email", "to[1]:text"}
	if !slices.Equal(got, want) {
		t.Errorf("undeclared: %q, want %q", got, want)
	}
	// A high-risk action traces text of any length: "Bob" must be backed.
	got = nil
	for _, a := range tracedArgs(args, specs, true, 1) {
		got = append(got, a.path)
	}
	if !slices.Contains(got, "recipient.name") {
		t.Errorf("with no minimum, traced %q, want recipient.name among them", got)
	}
}
