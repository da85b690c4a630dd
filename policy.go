package custody

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/cedar-policy/cedar-go"
	"github.com/cedar-policy/cedar-go/types"
)

//go:embed default.cedar
var defaultPolicyText []byte

// DefaultPolicyText is the embedded default policy (design rule 2 and the
// default gate risks).
func DefaultPolicyText() []byte { return slices.Clone(defaultPolicyText) }

// Policy is a parsed Cedar policy set with its version, the SHA-256 of its
// text. It is immutable and safe for concurrent use.
type Policy struct {
	Text    string
	Version string

	all            *cedar.PolicySet
	withoutConfirm *cedar.PolicySet // all but @outcome("confirm") forbids
	names          map[cedar.PolicyID]string
	outcomes       map[cedar.PolicyID]State
	risks          map[cedar.PolicyID]Risk
	traces         map[cedar.PolicyID][]TraceSpec // @trace of gate rules (trace.go)
	literals       map[cedar.PolicyID][]string    // string literals of gate rules, for ActionLabel
	approvers      map[cedar.PolicyID][]string    // @approver roles of admission forbids (review_roles.go)
	memo           *admitMemo                     // decisions made (admit_memo.go)
	readsKey       bool                           // a policy reads context.key (policy_reads.go)
}

// PolicyVersion is the version of a policy text: hex SHA-256.
func PolicyVersion(text []byte) string {
	h := sha256.Sum256(text)
	return hex.EncodeToString(h[:])
}

// ParsePolicy parses a Cedar policy text. Unknown @outcome or @risk values
// are errors, so a typo cannot silently turn a forbid into an admit.
func ParsePolicy(text []byte) (*Policy, error) {
	set, err := cedar.NewPolicySetFromBytes("policy.cedar", text)
	if err != nil {
		return nil, invalid("policy", "policy does not parse: %v; fix the Cedar text (see docs/policy.md)", err)
	}
	p := &Policy{
		Text:           string(text),
		Version:        PolicyVersion(text),
		all:            set,
		withoutConfirm: cedar.NewPolicySet(),
		names:          map[cedar.PolicyID]string{},
		outcomes:       map[cedar.PolicyID]State{},
		risks:          map[cedar.PolicyID]Risk{},
		traces:         map[cedar.PolicyID][]TraceSpec{},
		literals:       map[cedar.PolicyID][]string{},
		approvers:      map[cedar.PolicyID][]string{},
		memo:           &admitMemo{},
		readsKey:       readsContext(set, "key"),
	}
	for id, pol := range set.All() {
		ann := pol.Annotations()
		p.names[id] = string(id)
		if n, ok := ann["id"]; ok {
			p.names[id] = string(n)
		}
		if o, ok := ann["outcome"]; ok {
			st, err := parseOutcome(string(o))
			if err != nil {
				return nil, err
			}
			if pol.Effect() != cedar.Forbid {
				return nil, invalid("policy", "policy %s: @outcome belongs on forbid policies", p.names[id])
			}
			p.outcomes[id] = st
		}
		if r, ok := ann["risk"]; ok {
			risk, err := ParseRisk(string(r))
			if err != nil {
				return nil, invalid("policy", "policy %s: %v", p.names[id], err)
			}
			p.risks[id] = risk
		}
		if tr, ok := ann["trace"]; ok {
			specs, err := parseTrace(string(tr))
			if err != nil {
				return nil, invalid("policy", "policy %s: %v", p.names[id], err)
			}
			if pol.Effect() != cedar.Permit {
				return nil, invalid("policy", "policy %s: @trace belongs on gate permits", p.names[id])
			}
			p.traces[id] = specs
		}
		if a, ok := ann["approver"]; ok {
			roles, err := parseApprover(string(a))
			if err != nil {
				return nil, invalid("policy", "policy %s: %v", p.names[id], err)
			}
			if pol.Effect() != cedar.Forbid {
				return nil, invalid("policy", "policy %s: @approver belongs on admission forbid policies", p.names[id])
			}
			p.approvers[id] = roles
		}
		if _, ok := ann["risk"]; ok || p.traces[id] != nil {
			p.literals[id] = gateLiterals(pol)
		}
		if p.outcomes[id] != StatePendingConfirmation {
			p.withoutConfirm.Add(id, pol)
		}
	}
	return p, nil
}

func parseOutcome(s string) (State, error) {
	switch s {
	case "reject":
		return StateRejected, nil
	case "quarantine":
		return StateQuarantined, nil
	case "confirm":
		return StatePendingConfirmation, nil
	}
	return "", invalid("policy", "@outcome(%q) must be reject, quarantine or confirm", s)
}

// MustDefaultPolicy returns the parsed embedded policy.
func MustDefaultPolicy() *Policy {
	p, err := ParsePolicy(defaultPolicyText)
	if err != nil {
		panic(fmt.Sprintf("custody: embedded default policy: %v", err))
	}
	return p
}

// AdmissionInput is what the admission policy decides on. Every field comes
// from the credential, the request metadata or the store; none from the body
// but Metadata, the writer's own labels.
type AdmissionInput struct {
	Principal  *Principal
	Channel    string
	Class      Class
	Key        string
	Authority  Authority
	Audience   string
	Overwrite  bool
	Sensitive  bool
	HasSession bool
	Derived    bool
	// Metadata is the candidate's metadata, context.metadata to the
	// policy: data the writer sent, to be read as a claim, never as rights.
	Metadata Metadata
}

// Admission is the policy's decision on a candidate.
type Admission struct {
	State  State
	Rules  []string // the ids of the policies that decided
	Reason string
	Error  string // set when the decision is pending
	Inputs map[string]string
}

// Inputs renders the input for a receipt.
func (in AdmissionInput) inputs() map[string]string {
	return map[string]string{
		"principal":   in.Principal.ID(),
		"roles":       strings.Join(in.Principal.Roles, ","),
		"channel":     in.Channel,
		"class":       string(in.Class),
		"key":         in.Key,
		"authority":   in.Authority.String(),
		"audience":    in.Audience,
		"overwrite":   strconv.FormatBool(in.Overwrite),
		"sensitive":   strconv.FormatBool(in.Sensitive),
		"has_session": strconv.FormatBool(in.HasSession),
		"derived":     strconv.FormatBool(in.Derived),
	}
}

func audienceKind(a string) string {
	if a == AudienceOwner || a == AudienceTenant {
		return a
	}
	return "group"
}

func (in AdmissionInput) request() cedar.Request {
	roles := make([]types.Value, len(in.Principal.Roles))
	for i, r := range in.Principal.Roles {
		roles[i] = types.String(r)
	}
	return cedar.Request{
		Principal: types.NewEntityUID("Principal", types.String(in.Principal.ID())),
		Action:    types.NewEntityUID("Action", "admit"),
		Resource:  types.NewEntityUID("Memory", "candidate"),
		Context: types.NewRecord(types.RecordMap{
			"channel":        types.String(in.Channel),
			"channel_kind":   types.String(ChannelKind(in.Channel)),
			"class":          types.String(in.Class),
			"key":            types.String(in.Key),
			"authority":      types.String(in.Authority.String()),
			"authority_rank": types.Long(in.Authority),
			"audience":       types.String(in.Audience),
			"audience_kind":  types.String(audienceKind(in.Audience)),
			"overwrite":      types.Boolean(in.Overwrite),
			"sensitive":      types.Boolean(in.Sensitive),
			"has_session":    types.Boolean(in.HasSession),
			"derived":        types.Boolean(in.Derived),
			"roles":          types.NewSet(roles...),
			"metadata":       in.Metadata.cedar(),
		}),
	}
}

// admit evaluates the admission policy. It never admits by default: no
// matching permit quarantines, and any evaluation error leaves the candidate
// pending with the error in the decision (design rule 3).
func (p *Policy) admit(in AdmissionInput) Admission {
	a, kind := p.decide(in)
	a.Inputs, a.Reason = in.inputs(), explain(kind, a.Rules, in)
	return a
}

// reasonKind is which of decide's outcomes a decision is: its reason is
// written from it and the input at hand (explain), so that a decision
// kept for like inputs (admit_memo.go) is explained in each one's terms.
type reasonKind uint8

const (
	reasonError    reasonKind = iota // the policy could not be evaluated
	reasonAdmitted                   // a permit matched
	reasonNoPermit                   // no rule matched
	reasonRejected                   // a forbid rejects
	reasonHeld                       // a forbid quarantines, or confirmation without a permit
	reasonConfirm                    // a forbid waits for the owner's confirmation
)

// decide is admit's decision (state, rules, error) and which outcome it
// is, without the input's rendering.
func (p *Policy) decide(in AdmissionInput) (Admission, reasonKind) {
	var a Admission
	req := in.request()
	decision, diag := cedar.Authorize(p.all, nil, req)
	if len(diag.Errors) > 0 {
		a.State = StatePending
		for _, e := range diag.Errors {
			a.Rules = append(a.Rules, p.names[e.PolicyID])
			a.Error += fmt.Sprintf("%s: %s; ", p.names[e.PolicyID], e.Message)
		}
		return a, reasonError
	}
	if decision == cedar.Allow {
		a.State, a.Rules = StateAdmitted, p.ruleNames(diag.Reasons)
		return a, reasonAdmitted
	}
	if len(diag.Reasons) == 0 {
		a.State, a.Rules = StateQuarantined, []string{"no-permit"}
		return a, reasonNoPermit
	}
	outcome := StatePendingConfirmation
	for _, r := range diag.Reasons {
		switch o := p.outcomes[r.PolicyID]; {
		case o == StateRejected:
			outcome = StateRejected
		case o == StateQuarantined && outcome != StateRejected:
			outcome = StateQuarantined
		case o == "" && outcome == StatePendingConfirmation:
			outcome = StateQuarantined // a forbid without @outcome quarantines
		}
	}
	a.Rules = p.ruleNames(diag.Reasons)
	if outcome == StatePendingConfirmation {
		// Confirmation applies only to what a permit would otherwise admit.
		if d, _ := cedar.Authorize(p.withoutConfirm, nil, req); d != cedar.Allow {
			outcome = StateQuarantined
			a.Rules = append(a.Rules, "no-permit")
		}
	}
	a.State = outcome
	switch outcome {
	case StateRejected:
		return a, reasonRejected
	case StateQuarantined:
		return a, reasonHeld
	}
	return a, reasonConfirm
}

// explain is the reason of a decision of kind by rules, in the terms of
// in (its class, channel, authority, key).
func explain(kind reasonKind, rules []string, in AdmissionInput) string {
	switch kind {
	case reasonError:
		return "the admission policy could not be evaluated; the candidate waits as pending until the policy is fixed"
	case reasonAdmitted:
		return "admitted by " + fmt.Sprint(rules)
	case reasonNoPermit:
		return fmt.Sprintf("no rule admits a %s from channel %s at authority %s; held for review", in.Class, in.Channel, in.Authority)
	case reasonRejected:
		return fmt.Sprintf("rejected by %v", rules)
	case reasonHeld:
		return fmt.Sprintf("held for review by %v (channel %s, authority %s)", rules, in.Channel, in.Authority)
	}
	return fmt.Sprintf("overwriting sensitive key %q waits for the owner's confirmation (%v)", in.Key, rules)
}

func (p *Policy) ruleNames(rs []cedar.DiagnosticReason) []string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		out = append(out, p.names[r.PolicyID])
	}
	slices.Sort(out)
	return out
}

// Risk is how dangerous a gated action is.
type Risk string

// The risks, lowest first.
const (
	RiskLow      Risk = "low"
	RiskMedium   Risk = "medium"
	RiskHigh     Risk = "high"
	RiskCritical Risk = "critical"
)

var riskOrder = map[Risk]int{RiskLow: 1, RiskMedium: 2, RiskHigh: 3, RiskCritical: 4}

// ParseRisk validates a risk name.
func ParseRisk(s string) (Risk, error) {
	if _, ok := riskOrder[Risk(s)]; ok {
		return Risk(s), nil
	}
	return "", invalid("risk", "risk %q must be low, medium, high or critical", s)
}

// Risk classifies a gated action: the highest @risk of the matching gate
// permits; an action no policy names, or one whose evaluation fails, is high
// (or higher, if a matching rule says so).
func (p *Policy) Risk(action string) (Risk, []string) {
	g := p.gate(action)
	return g.risk, g.rules
}

// Risks lists the risk annotations the policy declares, for display.
func (p *Policy) Risks() map[string]Risk {
	out := map[string]Risk{}
	for id, r := range p.risks {
		out[p.names[id]] = r
	}
	return maps.Clone(out)
}
