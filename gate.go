package custody

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
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

// MinTracedValue is the shortest normalised argument value the gate traces
// to memories and observations; shorter strings, numbers and booleans are
// not traced (they occur everywhere).
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
				d.Reasons = append(d.Reasons, "the owner confirmed this exact action; the confirmation is now used")
			} else {
				d.ConfirmDigest = digest
			}
		}
		d.LogIndex, err = s.appendAs(ctx, tx, c.Principal, &tlog.Entry{
			Tenant: c.Tenant(), Transition: "gate", NewState: d.Decision,
			Details: map[string]string{
				"subject": c.Subject.Name, "action": in.Action, "args_sha256": digest, "risk": string(d.Risk),
				"required": d.Required.String(), "observed": d.Observed.String(),
				"justification": strings.Join(in.Justification, ","), "reasons": strings.Join(d.Reasons, "; "),
			},
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	s.emit(Event{Kind: "gate", Tenant: c.Tenant(), Action: in.Action, Decision: d.Decision})
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
		_, err := s.appendAs(ctx, tx, c.Principal, &tlog.Entry{Tenant: g.Tenant, Transition: "confirm_action",
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
}

func (s *Service) gate(ctx context.Context, tx Tx, c *Caller, in GateInput) (*GateDecision, error) {
	pol, err := s.policyFor(ctx, tx, c.Tenant())
	if err != nil {
		return &GateDecision{Decision: GateDeny, Risk: RiskCritical, Required: AuthorityConfirmed,
			Reasons: []string{"the policy could not be loaded: " + err.Error()}}, nil
	}
	risk, rules := pol.Risk(in.Action)
	d := &GateDecision{Risk: risk, Required: DefaultMinAuthority[risk], Observed: AuthorityConfirmed,
		Reasons: []string{fmt.Sprintf("action %q is %s risk (%s) and needs authority %s", in.Action, risk, strings.Join(rules, ","), DefaultMinAuthority[risk])}}
	now := s.now()
	deny, confirm, traced := false, false, 0
	judge := func(what string, b backing) {
		traced++
		d.Observed = min(d.Observed, max(b.best, AuthorityExternal))
		switch {
		case b.best >= d.Required:
		case b.anyWarm:
			confirm = true
			d.Reasons = append(d.Reasons, fmt.Sprintf("%s is backed only by authority %s; the owner's confirmation would satisfy it", what, b.best))
		default:
			deny = true
			d.Offending = append(d.Offending, b.sources...)
			d.Reasons = append(d.Reasons, fmt.Sprintf("%s comes only from untrusted content: %s", what, strings.Join(b.sources, ", ")))
		}
	}
	for _, id := range in.Justification {
		r, err := tx.Record(ctx, c.Tenant(), id)
		ok := err == nil
		if ok {
			if ok, err = retrievable(ctx, tx, c, r, now); err != nil {
				return nil, err
			}
		}
		if !ok {
			deny = true
			d.Observed = AuthorityExternal
			d.Offending = append(d.Offending, id)
			d.Reasons = append(d.Reasons, fmt.Sprintf("memory %s is not an eligible memory of the subject", id))
			continue
		}
		judge("memory "+id, backing{best: r.Authority, anyWarm: r.Authority > AuthorityExternal, sources: []string{r.ID + " (" + r.Channel + ", written by " + r.Writer + ")"}})
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
	for _, av := range argValues(in.Args) {
		b, found, err := s.trace(ctx, tx, c, av.value, obs, now)
		if err != nil {
			return nil, err
		}
		if found {
			judge(fmt.Sprintf("argument %s=%q", av.path, av.value), b)
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
		d.Reasons = append(d.Reasons, "nothing in memory or in the session backs this action; the owner's confirmation would")
	default:
		d.Decision = GateAllow
	}
	if traced == 0 && d.Decision == GateAllow {
		d.Observed = d.Required
	}
	return d, nil
}

// trace finds where a value occurs among the subject's memories (any state,
// in the subject's audience) and the session's observations.
func (s *Service) trace(ctx context.Context, tx Tx, c *Caller, value string, obs []*Observation, now time.Time) (backing, bool, error) {
	norm := NormalizeValue(value)
	var b backing
	found := false
	recs, err := tx.Mentioning(ctx, c.Tenant(), norm, 200)
	if err != nil {
		return b, false, err
	}
	for _, r := range recs {
		if !AudienceIncludes(r.Audience, r.Owner, c.Subject.Name, c.Subject.Groups) {
			continue
		}
		if !strings.Contains(NormalizeValue(r.Body), norm) && !strings.Contains(NormalizeValue(r.Key), norm) {
			continue
		}
		found = true
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
	for _, o := range obs {
		if !strings.Contains(NormalizeValue(o.Text), norm) {
			continue
		}
		found = true
		b.best = max(b.best, o.Authority)
		b.anyWarm = b.anyWarm || o.Authority > AuthorityExternal
		b.sources = append(b.sources, fmt.Sprintf("observation %s (%s)", o.ID, o.Channel))
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

type argValue struct{ path, value string }

// argValues flattens the string leaves of args that are long enough to trace.
func argValues(args map[string]any) []argValue {
	var out []argValue
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch t := v.(type) {
		case string:
			if len(NormalizeValue(t)) >= MinTracedValue {
				out = append(out, argValue{path, t})
			}
		case map[string]any:
			keys := make([]string, 0, len(t))
			for k := range t {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(path+"."+k, t[k])
			}
		case []any:
			for i, e := range t {
				walk(fmt.Sprintf("%s[%d]", path, i), e)
			}
		}
	}
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		walk(k, args[k])
	}
	return out
}

func validAction(a string) error {
	if a == "" || len(a) > 128 {
		return invalid("action", "action must be a name of 1 to 128 characters")
	}
	return nil
}
