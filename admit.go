package custody

import (
	"context"
	"fmt"
	"time"
)

// A decision is a pure function of its candidate and of what the store
// holds at the time: admitState gathers the latter in a transaction, and
// admission computes the decision from the two without reading anything.
// The split lets a write be decided ahead, outside the writer, against a
// predicted state (prepare.go), and applied in the writer only if the state
// it gathers there is the one predicted.

// admitState is everything of the store a new record's decision depends on.
type admitState struct {
	floor   Authority // the session's trust floor, when the record names one
	lin     lineage
	current string // the id of the key's version in force ("" none or keyless)
	version int    // the key's highest version (fresh keyed records only)
	policy  *Policy
	// policyErr is why the tenant's policy could not be loaded (policy nil).
	policyErr string
	pause     pauseHold // the first open pause that holds the write
}

// pauseHold is what a decision uses of the pause that holds it: the fields
// its reason names. The zero value is no pause.
type pauseHold struct {
	ID, Tenant, Writer, Channel, By, Reason string
}

// admitState reads what r's decision depends on, as decide always has: the
// session (its floor), the parents (their lineage), the key's versions, the
// tenant's policy and its pauses open at now. fresh reads the key's highest
// version too (a new record takes the next one).
func (s *Service) admitState(ctx context.Context, tx Tx, c *Caller, r *Record, fresh bool, now time.Time) (*admitState, []*Pause, error) {
	st := &admitState{}
	if r.Session != "" {
		sess, err := s.session(ctx, tx, c, r.Session)
		if err != nil {
			return nil, nil, err
		}
		st.floor = sess.Floor
	}
	lin, err := s.parents(ctx, tx, c, r.Parents)
	if err != nil {
		return nil, nil, err
	}
	st.lin = lin
	if r.Key != "" {
		if fresh {
			st.current, st.version, err = tx.KeyVersions(ctx, r.Tenant, r.Owner, r.Namespace, r.Key)
		} else {
			st.current, err = tx.CurrentID(ctx, r.Tenant, r.Owner, r.Namespace, r.Key)
		}
		if err != nil {
			return nil, nil, err
		}
	}
	if pol, err := s.policyFor(ctx, tx, r.Tenant); err != nil {
		st.policyErr = clip(err.Error(), MaxErrorBytes) // kept in the receipt and the log (leaf_limits.go)
	} else {
		st.policy = pol
	}
	ps, err := tx.OpenPauses(ctx, r.Tenant, now)
	if err != nil {
		return nil, nil, err
	}
	st.pause = holdOf(ps, now, c.Principal.ID(), r.Channel)
	return st, ps, nil
}

// holdOf is the first of ps that holds a write by writer on channel at now.
func holdOf(ps []*Pause, now time.Time, writer, channel string) pauseHold {
	for _, p := range ps {
		if p.Active(now) && p.matches(writer, channel) {
			return pauseHold{ID: p.ID, Tenant: p.Tenant, Writer: p.Writer, Channel: p.Channel, By: p.By, Reason: p.Reason}
		}
	}
	return pauseHold{}
}

// same reports whether a decision against st would be the decision
// against o: every input admission reads is equal.
func (st *admitState) same(o *admitState) bool {
	return st.floor == o.floor && st.lin.same(o.lin) && st.current == o.current && st.version == o.version &&
		st.policy.version() == o.policy.version() && st.policyErr == o.policyErr && st.pause == o.pause
}

// same compares what admission reads of a lineage: its authority and
// audience, and whether a parent is ineligible (the first one, by id and
// state, is named in the reason).
func (lin lineage) same(o lineage) bool {
	if lin.authority != o.authority || lin.audience != o.audience || len(lin.ineligible) > 0 != (len(o.ineligible) > 0) {
		return false
	}
	return len(lin.ineligible) == 0 || lin.ineligible[0].ID == o.ineligible[0].ID && lin.ineligible[0].State == o.ineligible[0].State
}

// version is p's version, "" for none.
func (p *Policy) version() string {
	if p == nil {
		return ""
	}
	return p.Version
}

// verdict is a decision on a record: the fields it sets and its receipt.
type verdict struct {
	authority     Authority
	audience      string
	version       int
	policyVersion string
	receipt       *Receipt
}

// apply sets the decided fields on r.
func (v *verdict) apply(r *Record) {
	r.Authority, r.Audience, r.Version, r.PolicyVersion = v.authority, v.audience, v.version, v.policyVersion
}

// admission decides r against st: its authority and audience from its
// channel, session and parents, its version, and the tenant's policy's
// decision, held by a pause or an ineligible parent. It reads nothing and
// changes nothing; it never admits when the policy could not be loaded or
// evaluated. The authority is never above ceiling when ceiling is set.
func (s *Service) admission(c *Caller, r *Record, st *admitState, fresh bool, ceiling Authority) verdict {
	v := verdict{authority: ChannelAuthority(r.Channel), version: r.Version}
	if ceiling > 0 {
		v.authority = min(v.authority, ceiling)
	}
	in := AdmissionInput{Principal: c.Principal, Channel: r.Channel, Class: r.Class, Key: r.Key, Metadata: r.Metadata}
	if r.Session != "" {
		in.HasSession = true
		if ChannelKind(r.Channel) == ChannelAgent && !s.opts.DisableLineage {
			v.authority = min(v.authority, st.floor)
		}
	}
	lin := st.lin
	if s.opts.DisableLineage {
		lin = lineage{authority: AuthorityConfirmed, audience: AudienceTenant}
	}
	in.Derived = len(r.Parents) > 0 && !s.opts.DisableLineage
	v.authority = min(v.authority, lin.authority)
	v.audience = narrowAudience(r.Audience, lin.audience)
	in.Authority, in.Audience = v.authority, v.audience
	if r.Key != "" {
		in.Overwrite = st.current != "" && st.current != r.ID
	}
	if fresh { // the key's next version; 1 without a key (st.version is 0)
		v.version = st.version + 1
	}
	in.Sensitive = s.Sensitive(r.Key)
	var adm Admission
	if st.policy == nil {
		adm = Admission{State: StatePending, Rules: []string{"policy-unavailable"}, Error: st.policyErr,
			Reason: "the tenant's policy could not be loaded; the candidate waits as pending", Inputs: in.inputs()}
		v.policyVersion = "unavailable"
	} else {
		adm = st.policy.Admit(in)
		v.policyVersion = st.policy.Version
	}
	if len(lin.ineligible) > 0 && adm.State != StateRejected {
		adm.State = StateSuspended
		adm.Rules = append(adm.Rules, "parent-ineligible")
		adm.Reason = fmt.Sprintf("parent %s is not eligible (%s); the derived record stays suspended until it is rebuilt", lin.ineligible[0].ID, lin.ineligible[0].State)
	}
	if p := st.pause; p.ID != "" && adm.State != StateRejected && adm.State != StateSuspended {
		what := "writes of " + p.Tenant + "/" + p.Writer
		if p.Channel != "" {
			what = "writes on channel " + p.Channel
		}
		adm.State = StateQuarantined
		adm.Rules = append(adm.Rules, "pause:"+p.ID)
		adm.Reason = fmt.Sprintf("%s are paused (pause %s by %s: %s); the candidate is held for review", what, p.ID, p.By, p.Reason)
	}
	v.receipt = &Receipt{Decision: adm.State, PolicyVersion: v.policyVersion, Rules: adm.Rules, Reason: adm.Reason, Inputs: adm.Inputs, Error: adm.Error}
	return v
}
