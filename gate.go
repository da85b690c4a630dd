package custody

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
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

// MinTracedValue is the fewest letters and digits of a text value the
// gate traces for an action of low or medium risk, which looks values up
// only to refuse those that come from untrusted content: shorter text
// occurs everywhere. For a high or critical action every value must be
// backed, whatever its length. Amounts and e-mail addresses are compared
// whole, whatever their length.
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
	// Endorsable are the sources of the session (observations' source_ref)
	// that hold a value of this call which nothing else backs: what the
	// user could endorse for the action (POST /v1/sessions/{id}/endorse),
	// if her own request named that source.
	Endorsable []string `json:"endorsable,omitempty"`
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
// and values behind it (design rule 12, by positive provenance: provenance.go).
// The decision is made in a read transaction, beside the writer, so that
// tracing many values never delays anyone's writes; only its log entry,
// the use of an owner's confirmation and what it relied on go through
// the writer. Every decision is logged.
func (s *Service) Gate(ctx context.Context, c *Caller, in GateInput) (*GateDecision, error) {
	if err := validAction(in.Action); err != nil {
		return nil, err
	}
	if len(in.Justification) > 100 {
		return nil, invalid("justification", "at most 100 justifying memories")
	}
	var d *GateDecision
	if err := s.store.View(ctx, func(tx Tx) error {
		var err error
		d, err = s.decideGate(ctx, tx, c, in)
		return err
	}); err != nil {
		return nil, err
	}
	digest := ActionDigest(in.Action, in.Args)
	decided := *d
	err := s.update(ctx, func(tx Tx) error {
		*d = decided // a store may run fn again
		if d.Decision == GateConfirm {
			used, err := tx.UseGrant(ctx, c.Tenant(), c.Subject.Name, digest, s.now())
			if err != nil {
				return err
			}
			if used {
				d.Decision = GateAllow
				d.Reasons = append(slices.Clip(d.Reasons), ReasonConfirmationUsed) // verify counts it (grant_log.go)
			} else {
				d.ConfirmDigest = digest
			}
		}
		var err error
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
