package custody

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"
)

// DryRunRecords is how many of the tenant's recent candidates a new policy
// is tried on before it is installed.
const DryRunRecords = 100

// dryRunWindows are the look-backs tried, shortest first, to find the
// tenant's recent candidates (record ids are ULIDs, ordered by time); the
// last one reaches the tenant's first record.
var dryRunWindows = []time.Duration{time.Minute, time.Hour, 24 * time.Hour, 30 * 24 * time.Hour, 0}

var everyState = []State{StateAdmitted, StateQuarantined, StatePendingConfirmation, StatePending,
	StateRejected, StateRetired, StateSuspended}

// DryRunPolicy tries a new policy text for the caller's tenant without
// installing it: on the admission inputs of the tenant's recent candidates
// (up to DryRunRecords, any state, as their receipts recorded them) and on
// one sample candidate of the caller for every channel kind, class,
// audience kind and overwrite, sensitive, session and derived flag. It
// returns an ErrInvalid naming the first candidate the policy cannot
// evaluate, with the evaluation error, and nil when it decides them all.
// A policy that cannot be evaluated would leave every such candidate
// pending (fail closed): the check keeps a broken policy from quietly
// stalling admission.
func (s *Service) DryRunPolicy(ctx context.Context, c *Caller, text []byte) error {
	p, err := ParsePolicy(text)
	if err != nil {
		return err
	}
	var recs []*Record
	err = s.store.View(ctx, func(tx Tx) error {
		recs, err = recentCandidates(ctx, tx, c.Tenant(), s.now())
		return err
	})
	if err != nil {
		return err
	}
	for _, r := range recs {
		in, ok := inputFromReceipt(r.Receipt)
		if !ok {
			continue // a receipt of a review or a cascade, not of an admission
		}
		if a := p.Admit(in); a.State == StatePending {
			return dryRunError(fmt.Sprintf("record %s (%s)", r.ID, describeInput(in)), a.Error)
		}
	}
	for _, in := range sampleInputs(c.Principal) {
		if a := p.Admit(in); a.State == StatePending {
			return dryRunError(fmt.Sprintf("a sample candidate (%s)", describeInput(in)), a.Error)
		}
	}
	return nil
}

func dryRunError(what, evalErr string) error {
	return invalid("text", "the new policy cannot be evaluated on %s: %s; it would leave such candidates pending. "+
		"Fix the policy, or install it anyway with force (?force=true), and candidates it cannot decide will wait as pending",
		what, strings.TrimSuffix(strings.TrimSpace(evalErr), ";"))
}

// recentCandidates returns up to DryRunRecords of the tenant's newest
// records in any state, looking back through dryRunWindows until one holds
// enough.
func recentCandidates(ctx context.Context, tx Tx, tenant string, now time.Time) ([]*Record, error) {
	var recs []*Record
	for _, w := range dryRunWindows {
		after := ""
		if w > 0 {
			var id ulid.ULID
			if err := id.SetTime(ulid.Timestamp(now.Add(-w))); err != nil {
				return nil, err
			}
			after = id.String()
		}
		var err error
		if recs, err = tx.InState(ctx, tenant, everyState, after, DryRunRecords); err != nil {
			return nil, err
		}
		if len(recs) >= DryRunRecords {
			break
		}
	}
	return recs, nil
}

// inputFromReceipt rebuilds the admission input a receipt recorded.
func inputFromReceipt(rc *Receipt) (AdmissionInput, bool) {
	if rc == nil || rc.Inputs["principal"] == "" || rc.Inputs["class"] == "" {
		return AdmissionInput{}, false
	}
	in := rc.Inputs
	tenant, name, _ := strings.Cut(in["principal"], "/")
	var roles []string
	if in["roles"] != "" {
		roles = strings.Split(in["roles"], ",")
	}
	auth, err := ParseAuthority(in["authority"])
	if err != nil {
		return AdmissionInput{}, false
	}
	flag := func(k string) bool { b, _ := strconv.ParseBool(in[k]); return b }
	return AdmissionInput{
		Principal: &Principal{Tenant: tenant, Name: name, Roles: roles},
		Channel:   in["channel"], Class: Class(in["class"]), Key: in["key"], Authority: auth, Audience: in["audience"],
		Overwrite: flag("overwrite"), Sensitive: flag("sensitive"), HasSession: flag("has_session"), Derived: flag("derived"),
	}, true
}

// sampleInputs is one candidate of p for every channel kind, class,
// audience kind and combination of the boolean inputs.
func sampleInputs(p *Principal) []AdmissionInput {
	var out []AdmissionInput
	for _, ch := range []string{ChannelUser, ChannelAgent, toolPrefix + "email", ChannelImport, ChannelDerive, ChannelAdmin} {
		for _, cl := range []Class{ClassPreference, ClassFact, ClassEpisode, ClassProcedure} {
			for _, aud := range []string{AudienceOwner, AudienceTenant, "group:team"} {
				for bits := range 16 {
					key := ""
					if bits&1 != 0 {
						key = "payee_account"
					}
					out = append(out, AdmissionInput{
						Principal: p, Channel: ch, Class: cl, Key: key, Authority: ChannelAuthority(ch), Audience: aud,
						Overwrite: bits&1 != 0, Sensitive: bits&2 != 0, HasSession: bits&4 != 0, Derived: bits&8 != 0,
					})
				}
			}
		}
	}
	return out
}

// describeInput names an admission input in an error message.
func describeInput(in AdmissionInput) string {
	return fmt.Sprintf("principal %s, channel %s, class %s, key %q, authority %s, audience %s, overwrite %t, sensitive %t, session %t, derived %t",
		in.Principal.ID(), in.Channel, in.Class, in.Key, in.Authority, in.Audience, in.Overwrite, in.Sensitive, in.HasSession, in.Derived)
}
