package custody

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/cedar-policy/cedar-go"
	"github.com/cedar-policy/cedar-go/types"
)

// TraceKind is how the gate compares a traced argument value with the
// memories and observations it may have come from: each kind has one
// canonical form (package canon), applied alike to the argument, to the
// text the stores index and to what it is compared with.
type TraceKind string

// The trace kinds.
const (
	// TraceText compares text and identifiers (canon.Ident): folded
	// (NFKC, case, look-alike letters, every digit set), as letters and
	// digits whose runs must be whole consecutive runs of the memory or
	// observation: spaces of every kind, line breaks, zero-width and bidi
	// characters, dashes, slashes, dots and other punctuation between
	// them do not count. Names, credentials, postal addresses.
	TraceText TraceKind = "text"
	// TraceAccount compares IBANs and account numbers as TraceText does,
	// shows them as a bank reads them (canon.Account), and checks an IBAN's
	// check digits: one that fails them is never allowed without the
	// owner's confirmation.
	TraceAccount TraceKind = "account"
	// TraceAmount compares numbers (canon.Amounts): a JSON number or a
	// numeric string in any common notation, digit set, scale or English
	// words, with the numbers of the text.
	TraceAmount TraceKind = "amount"
	// TraceEmail compares e-mail addresses (canon.Emails), folded and
	// whole, however the text spells them.
	TraceEmail TraceKind = "email"
)

// TraceSpec declares that arguments named Name (a case-insensitive pattern
// in which * stands for any characters) are traced as Kind. Untrusted is
// what a value that only untrusted content holds answers (GateDeny or
// GateConfirm; "" is the kind's default: GateConfirm for amounts,
// GateDeny otherwise).
type TraceSpec struct {
	Name      string    `json:"name"`
	Kind      TraceKind `json:"kind"`
	Untrusted string    `json:"untrusted,omitempty"`
}

// untrusted is what a value of the spec found only in untrusted content
// answers.
func (sp TraceSpec) untrusted() string {
	switch {
	case sp.Untrusted != "":
		return sp.Untrusted
	case sp.Kind == TraceAmount:
		return GateConfirm
	}
	return GateDeny
}

// parseTrace reads a @trace annotation: comma-separated name:kind:untrusted
// entries (the kind defaults to text, untrusted to the kind's default). An
// empty annotation traces nothing.
func parseTrace(s string) ([]TraceSpec, error) {
	specs := []TraceSpec{}
	for entry := range strings.SplitSeq(s, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		parts := strings.Split(entry, ":")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		name, kind, untrusted := strings.ToLower(parts[0]), string(TraceText), ""
		if len(parts) > 1 {
			kind = parts[1]
		}
		if len(parts) > 2 {
			untrusted = parts[2]
		}
		switch TraceKind(kind) {
		case TraceText, TraceAccount, TraceAmount, TraceEmail:
		default:
			return nil, fmt.Errorf("@trace entry %q: kind %q must be text, account, amount or email", entry, kind)
		}
		switch {
		case len(parts) > 3:
			return nil, fmt.Errorf("@trace entry %q: write name:kind or name:kind:deny (or :confirm)", entry)
		case untrusted != "" && untrusted != GateDeny && untrusted != GateConfirm:
			return nil, fmt.Errorf("@trace entry %q: %q must be deny or confirm (what a value that only untrusted content holds answers)", entry, untrusted)
		}
		if name == "" || strings.ContainsAny(name, " \t\n") {
			return nil, fmt.Errorf("@trace entry %q: name an argument (letters, digits, _ . - and *)", entry)
		}
		specs = append(specs, TraceSpec{Name: name, Kind: TraceKind(kind), Untrusted: untrusted})
	}
	return specs, nil
}

// gateRules is what the policy says about one gated action.
type gateRules struct {
	risk     Risk
	rules    []string
	traces   []TraceSpec
	declared bool   // some matching rule has a @trace annotation
	label    string // the action as the policy names it, or "other"
}

// gate evaluates the gate rules for an action: the highest @risk of the
// matching permits (an action no rule names, or one whose evaluation fails,
// is high), the union of their @trace declarations, and the label under
// which metrics count it.
func (p *Policy) gate(action string) gateRules {
	req := cedar.Request{
		Principal: types.NewEntityUID("Principal", "gate"),
		Action:    types.NewEntityUID("Action", "gate"),
		Resource:  types.NewEntityUID("Action", types.String(action)),
		Context:   types.NewRecord(types.RecordMap{"action": types.String(action)}),
	}
	_, diag := cedar.Authorize(p.all, nil, req)
	g := gateRules{label: "other"}
	for _, r := range diag.Reasons {
		rk, hasRisk := p.risks[r.PolicyID]
		tr, hasTrace := p.traces[r.PolicyID]
		if !hasRisk && !hasTrace {
			continue
		}
		if hasRisk {
			g.rules = append(g.rules, p.names[r.PolicyID])
			if riskOrder[rk] > riskOrder[g.risk] {
				g.risk = rk
			}
		}
		if hasTrace {
			g.declared = true
			g.traces = append(g.traces, tr...)
		}
		if g.label == "other" {
			g.label = labelIn(p.literals[r.PolicyID], action)
		}
	}
	slices.Sort(g.rules)
	switch {
	case len(diag.Errors) > 0 && riskOrder[g.risk] < riskOrder[RiskHigh]:
		g.risk, g.rules = RiskHigh, append(g.rules, "evaluation-error")
	case g.risk == "":
		g.risk, g.rules = RiskHigh, []string{"unnamed-action"}
	}
	return g
}

// Traces is what the gate traces for action: the @trace declarations of
// the matching gate rules, and whether there were any. Without any, the
// gate traces every string and number argument.
func (p *Policy) Traces(action string) ([]TraceSpec, bool) {
	g := p.gate(action)
	return g.traces, g.declared
}

// ActionLabel is the action as the policy names it, for metrics: the
// action itself where a matching gate rule spells it out, the pattern
// where a rule matches it by one (`like "payments.*"`), else "other". The
// labels are thus bounded by the policy's text, whatever callers send.
func (p *Policy) ActionLabel(action string) string { return p.gate(action).label }

var cedarString = regexp.MustCompile(`"((?:[^"\\]|\\.)*)"`)

// gateLiterals are the string literals of a gate rule's conditions (not
// of its annotations): the action names and patterns it can match.
func gateLiterals(pol *cedar.Policy) []string {
	text := string(pol.MarshalCedar())
	if i := strings.Index(text, "permit"); i >= 0 {
		text = text[i:]
	}
	var out []string
	for _, m := range cedarString.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	return out
}

// labelIn is the literal of lits that names action, exactly or as a
// pattern, or "other".
func labelIn(lits []string, action string) string {
	if slices.Contains(lits, action) {
		return action
	}
	for _, l := range lits {
		if strings.Contains(l, "*") && globMatch(l, action) {
			return l
		}
	}
	return "other"
}

// globMatch reports whether s matches pattern, in which * stands for any
// characters (Cedar's like, and @trace names).
func globMatch(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for _, part := range parts[1 : len(parts)-1] {
		i := strings.Index(s, part)
		if i < 0 {
			return false
		}
		s = s[i+len(part):]
	}
	return strings.HasSuffix(s, parts[len(parts)-1])
}
