package custody

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/custody-mem/custody/tlog"
)

// Gate decisions.
const (
	GateAllow   = "allow"
	GateConfirm = "confirm"
	GateDeny    = "deny"
)

// DefaultMinAuthority is the least authority each risk needs.
var DefaultMinAuthority = map[Risk]Authority{
	RiskLow: AuthorityExternal, RiskMedium: AuthorityAgent, RiskHigh: AuthorityUser, RiskCritical: AuthorityConfirmed,
}

// MinTracedValue is the shortest normalised text value the gate traces to
// memories and observations; shorter text occurs everywhere. Amounts and
// e-mail addresses are compared whole, whatever their length.
const MinTracedValue = 4

// GateInput is a request to run a sensitive action.
type GateInput struct {
	Action        string
	Args          map[string]any
	Justification []string
	Session       string
}

// GateDecision is the gate's answer.
type GateDecision struct {
	Decision  string    `json:"decision"`
	Risk      Risk      `json:"risk"`
	Required  Authority `json:"required"`
	Observed  Authority `json:"observed"`
	Reasons   []string  `json:"reasons"`
	Offending []string  `json:"offending,omitempty"`
	// ConfirmDigest names this exact action and arguments; the owner confirms
	// it with ConfirmAction, and the next identical gate call is allowed once.
	ConfirmDigest string `json:"confirm_digest,omitempty"`
	LogIndex      uint64 `json:"log_index"`

	label string // the action as the policy names it, for metrics
	// cited and traced are the records the decision relied on (impact.go).
	cited, traced []string
}

// Grant is an owner's one-time confirmation of an exact action.
type Grant struct {
	ID        string
	Tenant    string
	Subject   string
	Digest    string
	Actor     string
	CreatedAt time.Time
}

// ActionDigest is the SHA-256 of the action and its canonical arguments.
func ActionDigest(action string, args map[string]any) string {
	b, _ := json.Marshal(args) // map keys are sorted by encoding/json
	h := sha256.Sum256(append([]byte(action+"\x00"), b...))
	return hex.EncodeToString(h[:])
}

// Gate decides whether an action may run on the strength of the memories
// and values behind it (design rule 12). Every decision is logged.
func (s *Service) Gate(ctx context.Context, c *Caller, in GateInput) (*GateDecision, error) {
	if err := validAction(in.Action); err != nil {
		return nil, err
	}
	if len(in.Justification) > 100 {
		return nil, invalid("justification", "at most 100 justifying memories")
	}
	var d *GateDecision
	err := s.update(ctx, func(tx Tx) error {
		var err error
		if d, err = s.gate(ctx, tx, c, in); err != nil {
			return err
		}
		digest := ActionDigest(in.Action, in.Args)
		if d.Decision == GateConfirm {
			used, err := tx.UseGrant(ctx, c.Tenant(), c.Subject.Name, digest, s.now())
			if err != nil {
				return err
			}
			if used {
				d.Decision = GateAllow
				d.Reasons = append(d.Reasons, ReasonConfirmationUsed) // verify counts it (grant_log.go)
			} else {
				d.ConfirmDigest = digest
			}
		}
		if d.LogIndex, err = s.appendAs(ctx, tx, c.Principal, &tlog.Entry{
			Tenant: c.Tenant(), Transition: "gate", NewState: d.Decision,
			Details: map[string]string{
				"subject": c.Subject.Name, "action": in.Action, "args_sha256": digest, "risk": string(d.Risk),
				"required": d.Required.String(), "observed": d.Observed.String(),
				"justification": strings.Join(in.Justification, ","), "reasons": strings.Join(d.Reasons, "; "),
			},
		}); err != nil {
			return err
		}
		return s.noteGate(ctx, tx, c, in, d) // impact.go
	})
	if err != nil {
		return nil, err
	}
	// The event names the action as the policy does (or "other"): callers
	// choose action names, and observers count by them.
	s.emit(Event{Kind: "gate", Tenant: c.Tenant(), Action: d.label, Decision: d.Decision})
	return d, nil
}

// ConfirmAction records the owner's confirmation of an exact action and
// arguments. Only the subject's own user credential may confirm.
func (s *Service) ConfirmAction(ctx context.Context, c *Caller, action string, args map[string]any) (string, error) {
	if err := validAction(action); err != nil {
		return "", err
	}
	if !c.Principal.Has(RoleUser) || c.Principal.Name != c.Subject.Name {
		return "", forbidden("only the owner's own user credential can confirm an action")
	}
	g := &Grant{ID: s.newID(), Tenant: c.Tenant(), Subject: c.Subject.Name, Digest: ActionDigest(action, args), Actor: c.Principal.ID(), CreatedAt: s.now()}
	err := s.update(ctx, func(tx Tx) error {
		if err := tx.InsertGrant(ctx, g); err != nil {
			return err
		}
		_, err := s.appendAs(ctx, tx, c.Principal, &tlog.Entry{Tenant: g.Tenant, Transition: TransitionConfirmAction,
			Details: map[string]string{"subject": g.Subject, "action": action, "args_sha256": g.Digest}})
		return err
	})
	return g.Digest, err
}

// backing is what stands behind one justification or argument value.
type backing struct {
	best    Authority // the highest authority of an eligible source; 0 if none
	anyWarm bool      // some source (eligible or not) is above external
	sources []string  // where the value was found, for reasons
	records []string  // the ids of the memories it was found in
}

// maxNamed bounds the sources one reason names, and the offending ones a
// decision lists; the count of the others is given.
const maxNamed = 20

// named lists sources for a reason, at most maxNamed of them.
func named(sources []string) string {
	if len(sources) <= maxNamed {
		return strings.Join(sources, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(sources[:maxNamed], ", "), len(sources)-maxNamed)
}

// mustConfirm ends the reasons of a confirm.
const mustConfirm = "the owner must confirm this exact action before it runs"

func (s *Service) gate(ctx context.Context, tx Tx, c *Caller, in GateInput) (*GateDecision, error) {
	pol, err := s.policyFor(ctx, tx, c.Tenant())
	if err != nil {
		return &GateDecision{Decision: GateDeny, Risk: RiskCritical, Required: AuthorityConfirmed, label: "other",
			Reasons: []string{"the policy could not be loaded: " + err.Error()}}, nil
	}
	g := pol.gate(in.Action)
	risk := g.risk
	d := &GateDecision{Risk: risk, Required: DefaultMinAuthority[risk], Observed: AuthorityConfirmed, label: g.label,
		Reasons: []string{fmt.Sprintf("action %q is %s risk (%s) and needs authority %s", in.Action, risk, strings.Join(g.rules, ","), DefaultMinAuthority[risk])}}
	now := s.now()
	deny, confirm, traced := false, false, 0
	offend := func(sources []string) {
		for _, src := range sources {
			if len(d.Offending) < maxNamed {
				d.Offending = append(d.Offending, src)
			}
		}
	}
	judge := func(what string, kind TraceKind, b backing) {
		traced++
		d.Observed = min(d.Observed, max(b.best, AuthorityExternal))
		switch {
		case b.best >= d.Required:
		case kind == TraceAmount:
			// An amount from content below the required authority (an
			// invoice in an e-mail) is for the owner to check.
			confirm = true
			d.Reasons = append(d.Reasons, fmt.Sprintf("%s is an amount found only in content below authority %s: %s; %s", what, d.Required, named(b.sources), mustConfirm))
		case b.anyWarm && b.best == 0:
			confirm = true
			d.Reasons = append(d.Reasons, fmt.Sprintf("%s occurs only in memories that are not in force yet: %s; %s", what, named(b.sources), mustConfirm))
		case b.anyWarm:
			confirm = true
			d.Reasons = append(d.Reasons, fmt.Sprintf("%s is backed only by authority %s, below the required %s; %s", what, b.best, d.Required, mustConfirm))
		default:
			deny = true
			offend(b.sources)
			d.Reasons = append(d.Reasons, fmt.Sprintf("%s comes only from untrusted content: %s", what, named(b.sources)))
		}
	}
	for _, id := range in.Justification {
		r, err := tx.Record(ctx, c.Tenant(), id)
		ok := err == nil
		if ok {
			d.cited = append(d.cited, r.ID)
			if ok, err = retrievable(ctx, tx, c, r, now); err != nil {
				return nil, err
			}
		}
		if !ok {
			deny = true
			d.Observed = AuthorityExternal
			offend([]string{id})
			d.Reasons = append(d.Reasons, fmt.Sprintf("memory %s is not an eligible memory of the subject", id))
			continue
		}
		judge("memory "+id, TraceText, backing{best: r.Authority, anyWarm: r.Authority > AuthorityExternal, sources: []string{r.ID + " (" + r.Channel + ", written by " + r.Writer + ")"}})
	}
	var obs []*Observation
	if in.Session != "" {
		if _, err := s.session(ctx, tx, c, in.Session); err != nil {
			return nil, err
		}
		if obs, err = tx.Observations(ctx, c.Tenant(), in.Session); err != nil {
			return nil, err
		}
	}
	for _, a := range tracedArgs(in.Args, g.traces, g.declared) {
		b, found, err := s.trace(ctx, tx, c, a, obs, now)
		if err != nil {
			return nil, err
		}
		if found {
			d.traced = append(d.traced, b.records...)
			judge(fmt.Sprintf("argument %s=%q", a.path, a.shown), a.kind, b)
		}
	}
	switch {
	case deny:
		d.Decision = GateDeny
	case confirm:
		d.Decision = GateConfirm
	case traced == 0 && riskOrder[risk] >= riskOrder[RiskHigh]:
		d.Decision = GateConfirm
		d.Observed = AuthorityExternal
		d.Reasons = append(d.Reasons, "nothing in memory or in the session backs this action; "+mustConfirm)
	default:
		d.Decision = GateAllow
	}
	if traced == 0 && d.Decision == GateAllow {
		d.Observed = d.Required
	}
	return d, nil
}

// trace finds where an argument value occurs among the subject's memories
// (any state, owned by the subject or in its audience) and the session's
// observations, compared as its kind says.
func (s *Service) trace(ctx context.Context, tx Tx, c *Caller, a tracedArg, obs []*Observation, now time.Time) (backing, bool, error) {
	var b backing
	found := false
	seen := map[string]bool{}
	for _, frag := range a.fragments() {
		recs, err := tx.Mentioning(ctx, c.scope(now), frag)
		if err != nil {
			return b, false, err
		}
		for _, r := range recs {
			if seen[r.ID] || !AudienceIncludes(r.Audience, r.Owner, c.Subject.Name, c.Subject.Groups) || !(a.in(r.Body) || a.in(r.Key)) {
				continue
			}
			seen[r.ID] = true
			found = true
			b.records = append(b.records, r.ID)
			ok, err := retrievable(ctx, tx, c, r, now)
			if err != nil {
				return b, false, err
			}
			if ok {
				b.best = max(b.best, r.Authority)
			}
			b.anyWarm = b.anyWarm || (r.Authority > AuthorityExternal && (r.State == StateAdmitted || r.State == StatePendingConfirmation))
			b.sources = append(b.sources, fmt.Sprintf("memory %s (%s, %s)", r.ID, r.Channel, r.State))
		}
	}
	for _, o := range obs {
		if !a.in(o.Text) {
			continue
		}
		found = true
		b.best = max(b.best, o.Authority)
		b.anyWarm = b.anyWarm || o.Authority > AuthorityExternal
		b.sources = append(b.sources, fmt.Sprintf("observation %s (%s)", o.ID, o.Channel))
		if id, ok := strings.CutPrefix(o.SourceRef, "memory:"); ok && ValidID(id) {
			b.records = append(b.records, id) // content a read of memory put in the context
		}
	}
	slices.Sort(b.sources)
	return b, found, nil
}

// retrievable is the gate's view of rule 4, the same as retrieval's: the
// record is eligible for the subject and, if keyed, is the newest admitted
// version of its key (a superseded value justifies nothing).
func retrievable(ctx context.Context, tx Tx, c *Caller, r *Record, now time.Time) (bool, error) {
	if !r.Eligible(c.Subject.Name, c.Subject.Groups, now) {
		return false, nil
	}
	if r.Key == "" {
		return true, nil
	}
	cur, err := tx.CurrentID(ctx, r.Tenant, r.Owner, r.Namespace, r.Key)
	return err == nil && cur == r.ID, err
}

func validAction(a string) error {
	if a == "" || len(a) > 128 {
		return invalid("action", "action must be a name of 1 to 128 characters")
	}
	return nil
}
