package custody

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// The gate by positive provenance (design rule 12). For an action of high
// or critical risk every traced argument must be backed: its value, in the
// canonical form of its kind, occurs in a source of at least the required
// authority (an eligible memory in force, an observation of the session on
// a channel of that authority, or a source the subject endorsed for the
// action in the session), or the owner confirms the exact action. Per
// argument:
//
//	found in                                   high, critical       low, medium
//	a source of the required authority         backed               backed
//	only sources above external, or not in     confirm              confirm
//	force yet (pending confirmation)
//	only untrusted content                     the spec's answer:   the spec's answer
//	                                           deny (accounts,
//	                                           credentials, e-mail
//	                                           addresses) or confirm
//	                                           (amounts, addresses)
//	nowhere                                    confirm              not judged
//	more memories than MaxTracedRecords        confirm              confirm
//
// A justification is judged on its own authority and backs only the values
// it holds, through the same lookup as every other memory. Any deny
// denies, else any confirm confirms (the owner may confirm the exact
// action: ConfirmAction), else the action is allowed.

// Bounds of one gate call.
const (
	// MaxTracedArgs bounds the traced argument values of one call; a call
	// with more is refused as invalid input.
	MaxTracedArgs = 64
	// MaxTracedRecords bounds the memories the gate reads for one value;
	// a value more of the subject's memories hold counts as not backed.
	MaxTracedRecords = 1000
	// backingProbe bounds the memories in force the gate reads first,
	// looking for one that backs a value.
	backingProbe = 16
)

// finding is where one value was found.
type finding struct {
	backedBy string    // the first source of the required authority; "" if none
	best     Authority // the highest authority of an eligible source; 0 if none
	warm     []string  // sources above external but below the required authority, or not in force yet
	cold     []string  // untrusted sources: external content, held memories
	records  []string  // the ids of the memories it was found in
	overflow bool      // more than MaxTracedRecords memories hold it
	// endorsable are the source_refs of the session's observations below
	// the required authority that hold it.
	endorsable []string
}

func (f *finding) found() bool {
	return f.backedBy != "" || len(f.warm) > 0 || len(f.cold) > 0 || f.overflow
}

// sessionView is what the gate knows of the call's session: its
// observations, those of the highest authority first (the user's own
// requests, which back values at once), each with its text in canonical
// forms, and, read when first needed, the sources its subject endorsed
// for the action.
type sessionView struct {
	obs      []*Observation
	views    []*gateView
	endorsed func() (map[string]string, error) // source_ref → the endorsement's reason
	// cited are the justification's memories the subject may retrieve:
	// the gate looks a value up in them before it asks the store, as the
	// memory an agent cites is most often the one that holds the value.
	cited []*Record
}

func (s *Service) sessionView(ctx context.Context, tx Tx, c *Caller, in GateInput, now time.Time) (*sessionView, error) {
	sv := &sessionView{endorsed: func() (map[string]string, error) { return nil, nil }}
	if in.Session == "" {
		return sv, nil
	}
	if _, err := s.session(ctx, tx, c, in.Session); err != nil {
		return nil, err
	}
	obs, err := tx.Observations(ctx, c.Tenant(), in.Session)
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(obs, func(a, b *Observation) int { return int(b.Authority) - int(a.Authority) })
	sv.obs = obs
	for _, o := range obs {
		sv.views = append(sv.views, newGateView(o.Text, o.SourceRef))
	}
	var endorsed map[string]string
	sv.endorsed = func() (map[string]string, error) {
		if endorsed != nil {
			return endorsed, nil
		}
		ends, err := tx.Endorsements(ctx, c.Tenant(), in.Session)
		if err != nil {
			return nil, err
		}
		endorsed = map[string]string{}
		for _, e := range ends {
			if e.Covers(in.Action, now) {
				endorsed[e.SourceRef] = fmt.Sprintf("endorsed by %s for %s (log index %d)", e.Subject, strings.Join(e.Actions, ", "), e.LogIndex)
			}
		}
		return endorsed, nil
	}
	return sv, nil
}

// decideGate is the gate's decision, in a read transaction.
func (s *Service) decideGate(ctx context.Context, tx Tx, c *Caller, in GateInput) (*GateDecision, error) {
	pol, err := s.policyFor(ctx, tx, c.Tenant())
	if err != nil {
		return &GateDecision{Decision: GateDeny, Risk: RiskCritical, Required: AuthorityConfirmed, label: "other",
			Reasons: []string{"the policy could not be loaded: " + err.Error()}}, nil
	}
	g := pol.gate(in.Action)
	risk, required := g.risk, DefaultMinAuthority[g.risk]
	positive := riskOrder[risk] >= riskOrder[RiskHigh]
	minText := MinTracedValue
	if positive {
		minText = 1
	}
	args := tracedArgs(in.Args, g.traces, g.declared, minText)
	if len(args) > MaxTracedArgs {
		return nil, invalid("args", "the policy traces %d argument values of %s; a gate call may have at most %d: split the action into smaller calls", len(args), in.Action, MaxTracedArgs)
	}
	now := s.now()
	d := &GateDecision{Risk: risk, Required: required, Observed: AuthorityConfirmed, label: g.label,
		Reasons: []string{fmt.Sprintf("action %q is %s risk (%s) and needs authority %s", in.Action, risk, strings.Join(g.rules, ","), required)}}
	deny, confirm, judged := false, false, 0
	var citedRecs []*Record
	offend := func(sources []string) {
		for _, src := range sources {
			if len(d.Offending) < maxNamed {
				d.Offending = append(d.Offending, src)
			}
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
		judged++
		switch {
		case !ok:
			deny = true
			d.Observed = AuthorityExternal
			offend([]string{id})
			d.Reasons = append(d.Reasons, fmt.Sprintf("memory %s is not an eligible memory of the subject", id))
			continue
		case r.Authority < required && r.Authority == AuthorityExternal:
			deny = true
			offend([]string{r.ID})
			d.Reasons = append(d.Reasons, fmt.Sprintf("memory %s comes only from untrusted content (%s, written by %s)", id, r.Channel, r.Writer))
		case r.Authority < required:
			confirm = true
			d.Reasons = append(d.Reasons, fmt.Sprintf("memory %s is backed only by authority %s, below the required %s; %s", id, r.Authority, required, mustConfirm))
		}
		d.cited = append(d.cited, r.ID) // only what the subject may retrieve is relied on
		citedRecs = append(citedRecs, r)
		d.Observed = min(d.Observed, r.Authority)
	}
	sv, err := s.sessionView(ctx, tx, c, in, now)
	if err != nil {
		return nil, err
	}
	sv.cited = citedRecs
	for _, a := range args {
		f, err := s.find(ctx, tx, c, a, required, sv, now)
		if err != nil {
			return nil, err
		}
		d.traced = append(d.traced, f.records...)
		verdict, reason := judge(a, f, in.Action, required, positive)
		if verdict == "" {
			continue // a value of a low or medium action found nowhere
		}
		judged++
		d.Observed = min(d.Observed, max(f.best, AuthorityExternal))
		d.Reasons = append(d.Reasons, reason)
		switch verdict {
		case GateDeny:
			deny = true
			offend(f.cold)
		case GateConfirm:
			confirm = true
		}
		if verdict != GateAllow {
			d.Endorsable = append(d.Endorsable, f.endorsable...)
		}
	}
	switch {
	case deny:
		d.Decision = GateDeny
	case confirm:
		d.Decision = GateConfirm
	case judged == 0 && positive:
		d.Decision = GateConfirm
		d.Observed = AuthorityExternal
		d.Reasons = append(d.Reasons, "nothing in memory or in the session backs this action; "+mustConfirm)
	default:
		d.Decision = GateAllow
	}
	if judged == 0 && d.Decision == GateAllow {
		d.Observed = required
	}
	d.Endorsable = uniq(d.Endorsable)
	if d.Decision == GateAllow {
		d.Endorsable = nil
	}
	return d, nil
}

// mustConfirm ends the reasons of a confirm.
const mustConfirm = "the owner must confirm this exact action before it runs"

// judge is the verdict on one argument (the table above) and its reason:
// "" for a value of a low or medium action found nowhere, which is not
// judged.
func judge(a tracedArg, f *finding, action string, required Authority, positive bool) (string, string) {
	what := fmt.Sprintf("argument %s=%q", a.path, a.shown)
	if a.kind == TraceAccount && a.ident != "" {
		what += fmt.Sprintf(" (account %s)", strings.ToUpper(a.ident))
	}
	wouldBack := fmt.Sprintf("it would be backed by a memory in force of authority %s or more that holds it, an observation of this session on a channel of that authority, a source the user endorsed for %s in this session, or the owner's confirmation of this exact action", required, action)
	verdict, reason := "", ""
	switch {
	case f.backedBy != "":
		verdict, reason = GateAllow, fmt.Sprintf("%s is backed by %s", what, f.backedBy)
	case f.overflow:
		verdict, reason = GateConfirm, fmt.Sprintf("%s is held by more than %d memories, more than the gate reads for one value, so it does not count as backed; %s", what, MaxTracedRecords, mustConfirm)
	case len(f.warm) > 0:
		verdict, reason = GateConfirm, fmt.Sprintf("%s is found only below authority %s or in memories not in force yet: %s; %s", what, required, named(f.warm), mustConfirm)
	case len(f.cold) > 0 && a.untrusted == GateDeny:
		verdict, reason = GateDeny, fmt.Sprintf("%s comes only from untrusted content: %s", what, named(f.cold))
	case len(f.cold) > 0:
		verdict, reason = GateConfirm, fmt.Sprintf("%s is found only in content below authority %s: %s; %s", what, required, named(f.cold), mustConfirm)
	case positive:
		verdict, reason = GateConfirm, fmt.Sprintf("%s occurs in no memory or observation of the subject; %s; %s", what, wouldBack, mustConfirm)
	}
	switch {
	case verdict != GateAllow:
	case a.hidden != "":
		verdict, reason = GateConfirm, fmt.Sprintf("%s holds characters a reader does not see (%s): what would run is not what the owner reads; %s", what, a.hidden, mustConfirm)
	case a.badIBAN:
		verdict, reason = GateConfirm, fmt.Sprintf("%s is shaped like an IBAN but its check digits fail; %s", what, mustConfirm)
	}
	return verdict, reason
}

// find looks a value up: in the session's observations, then among the
// subject's memories in force of the required authority (which back it at
// once), then among all the subject's memories in any state, at most
// MaxTracedRecords of them.
func (s *Service) find(ctx context.Context, tx Tx, c *Caller, a tracedArg, required Authority, sv *sessionView, now time.Time) (*finding, error) {
	f := &finding{}
	for i, o := range sv.obs {
		if !a.in(sv.views[i]) {
			continue
		}
		auth, src := o.Authority, fmt.Sprintf("observation %s (%s)", o.ID, o.Channel)
		if o.SourceRef != "" {
			src = fmt.Sprintf("observation %s (%s, source %s)", o.ID, o.Channel, o.SourceRef)
		}
		if auth < required && auth < AuthorityUser && o.SourceRef != "" {
			endorsed, err := sv.endorsed()
			if err != nil {
				return nil, err
			}
			if why, ok := endorsed[o.SourceRef]; ok {
				auth, src = AuthorityUser, fmt.Sprintf("observation %s (%s, source %s %s)", o.ID, o.Channel, o.SourceRef, why)
			}
		}
		if id, ok := strings.CutPrefix(o.SourceRef, "memory:"); ok && ValidID(id) {
			f.records = append(f.records, id) // content a read of memory put in the context
		} else if o.SourceRef != "" && auth < required {
			f.endorsable = append(f.endorsable, o.SourceRef)
		}
		f.note(auth, auth > AuthorityExternal, required, src)
		if f.backedBy != "" {
			return f, nil
		}
	}
	views := map[string]*gateView{}
	seen := map[string]bool{}
	consider := func(r *Record) (bool, error) {
		if seen[r.ID] {
			return false, nil
		}
		seen[r.ID] = true
		v := views[r.ID]
		if v == nil {
			v = newGateView(r.GateFields()...)
			views[r.ID] = v
		}
		if !a.in(v) {
			return false, nil
		}
		ok, err := retrievable(ctx, tx, c, r, now)
		if err != nil {
			return false, err
		}
		eligible := Authority(0)
		if ok {
			eligible = r.Authority
		}
		warm := r.Authority > AuthorityExternal && (r.State == StateAdmitted || r.State == StatePendingConfirmation)
		f.records = append(f.records, r.ID)
		f.note(eligible, warm, required, fmt.Sprintf("memory %s (%s, %s, authority %s)", r.ID, r.Channel, r.State, r.Authority))
		return true, nil
	}
	for _, r := range sv.cited {
		if _, err := consider(r); err != nil || f.backedBy != "" {
			return f, err
		}
	}
	sc := c.scope(now)
	for _, frag := range a.fragments() {
		recs, err := tx.Mentioning(ctx, sc, MentionQuery{Text: frag, Limit: backingProbe, InForceFrom: required})
		if err != nil {
			return nil, err
		}
		for _, r := range recs {
			if _, err := consider(r); err != nil || f.backedBy != "" {
				return f, err
			}
		}
	}
	for _, frag := range a.fragments() {
		recs, err := tx.Mentioning(ctx, sc, MentionQuery{Text: frag, Limit: MaxTracedRecords + 1})
		if err != nil {
			return nil, err
		}
		if len(recs) > MaxTracedRecords {
			f.overflow = true
			recs = recs[:MaxTracedRecords]
		}
		for _, r := range recs {
			if _, err := consider(r); err != nil || f.backedBy != "" {
				return f, err
			}
		}
	}
	slices.Sort(f.warm)
	slices.Sort(f.cold)
	return f, nil
}

// note records one source holding the value: eligible is its authority if
// the subject may retrieve it in force (0 otherwise), warm whether it is
// above external content.
func (f *finding) note(eligible Authority, warm bool, required Authority, src string) {
	f.best = max(f.best, eligible)
	switch {
	case eligible >= required:
		f.backedBy = src
	case warm:
		f.warm = append(f.warm, src)
	default:
		f.cold = append(f.cold, src)
	}
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
