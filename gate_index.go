package custody

import (
	"maps"
	"slices"
	"strings"

	"github.com/custody-mem/custody/canon"
)

// gateView is a text the gate compares argument values with, in each
// canonical form as a value of that kind first asks for it: the runs of
// each of its fields (canon.Runner), and the numbers and e-mail addresses
// they mention. A call whose values are all accounts never reads the
// numbers of fifty e-mails.
type gateView struct {
	fields      []string
	runs        []canon.Runner
	nums, mails []string
	did         struct{ runs, nums, mails bool }
}

func newGateView(fields ...string) *gateView {
	return &gateView{fields: slices.DeleteFunc(slices.Clone(fields), func(f string) bool { return f == "" })}
}

func (v *gateView) runners() []canon.Runner {
	if !v.did.runs {
		for _, f := range v.fields {
			v.runs = append(v.runs, canon.NewRunner(f))
		}
		v.did.runs = true
	}
	return v.runs
}

func (v *gateView) amounts() []string {
	if !v.did.nums {
		for _, f := range v.fields {
			v.nums = append(v.nums, canon.Amounts(f)...)
		}
		v.nums, v.did.nums = uniq(v.nums), true
	}
	return v.nums
}

func (v *gateView) emails() []string {
	if !v.did.mails {
		for _, f := range v.fields {
			v.mails = append(v.mails, canon.Emails(f)...)
		}
		v.mails, v.did.mails = uniq(v.mails), true
	}
	return v.mails
}

// GateFields are the texts of a record the gate looks values up in:
// everything about it a model may be shown, body, key, namespace, the
// values of its metadata (in key order) and its source reference. An
// erased record's body and metadata are gone.
func (r *Record) GateFields() []string {
	out := []string{r.Body, r.Key, r.Namespace, r.SourceRef}
	if r.Erased {
		out[0] = ""
	}
	for _, k := range slices.Sorted(maps.Keys(r.Metadata)) {
		if !r.Erased {
			out = append(out, r.Metadata[k])
		}
	}
	return out
}

// GateIndexText is what a store indexes of a record's fields for the
// gate's lookups (Tx.Mentioning): the canonical letters and digits of each
// field (canon.Ident), separated by spaces, then a marker for each number
// the fields mention ("_4900_", "_9.5_", however it is written) and for
// each e-mail address ("<bob@x.example>", however it is spelled). A lookup
// asks for a text value by its canon.Ident, an amount by its marker and
// an address by its marker; no Ident holds '_', '<' or '@', so a marker
// never matches inside one. A store keeps every record whose index text
// holds the fragment, and the gate compares each with the value itself.
func GateIndexText(fields ...string) string {
	var b strings.Builder
	var nums, mails []string
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(' ')
		}
		if f == "" {
			continue
		}
		b.WriteString(canon.Ident(f))
		nums = append(nums, canon.Amounts(f)...)
		mails = append(mails, canon.Emails(f)...)
	}
	for _, n := range uniq(nums) {
		b.WriteString(" " + amountMarker(n))
	}
	for _, m := range uniq(mails) {
		b.WriteString(" " + emailMarker(m))
	}
	return b.String()
}

// RecordGateIndex is GateIndexText of the record's GateFields.
func RecordGateIndex(r *Record) string { return GateIndexText(r.GateFields()...) }

func amountMarker(n string) string { return "_" + n + "_" }
func emailMarker(m string) string  { return "<" + m + ">" }
