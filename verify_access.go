package custody

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/custody-mem/custody/tlog"
)

// accessLog is what verify's replay keeps of the entries that decide access
// and are stored outside the records: the latest principal entry of each
// name, the latest policy entry of each tenant, the terminal states the
// records reached (the tombstones), and what each record's latest entry
// says of its receipt. compareAccess checks the store against it.
type accessLog struct {
	principals map[string]*loggedPrincipalEntry // by tenant/name
	policies   map[string]loggedPolicy          // by tenant
	tombstones map[string]State                 // by tenant\x00id
	receipts   map[string]loggedReceipt         // by tenant\x00id
	sessions   map[string]map[string]string     // details of session entries, by tenant\x00id
	observed   map[string]map[string]string     // details of observation entries, by tenant\x00id
	pauses     map[string]map[string]string     // details of the latest pause or resume entry, by tenant\x00id
	grants     grantLog                         // owners' confirmations and their uses (grant_log.go)
	erased     map[string]bool                  // the records an entry erased, by tenant\x00id
	endorsed   map[string]loggedEndorsement     // endorse entries, by tenant\x00id (endorse.go)
	// sessionsFrom is the time of the first session entry: sessions opened
	// before it were opened before sessions were logged.
	sessionsFrom time.Time
}

type loggedPrincipalEntry struct {
	index   uint64
	details map[string]string
}

type loggedPolicy struct {
	index   uint64
	version string
}

// loggedReceipt is what a record's latest entry says its receipt holds.
type loggedReceipt struct {
	index     uint64
	actor     string
	time      time.Time
	policy    string // the record's policy version, of its latest record entry
	cascade   bool   // the latest entry is a suspension: reason and time are the cascade's
	reason    string // of the latest entry, unless a suspension
	rules     string
	errText   string
	inputs    string // digest of the receipt's inputs
	hasInputs bool   // false in entries older than the digest
}

func newAccessLog() *accessLog {
	return &accessLog{principals: map[string]*loggedPrincipalEntry{}, policies: map[string]loggedPolicy{},
		tombstones: map[string]State{}, receipts: map[string]loggedReceipt{},
		sessions: map[string]map[string]string{}, observed: map[string]map[string]string{}, pauses: map[string]map[string]string{},
		grants: grantLog{}, endorsed: map[string]loggedEndorsement{}, erased: map[string]bool{}}
}

// add takes note of entry e at index, which replay has checked.
func (a *accessLog) add(index uint64, e *tlog.Entry) {
	switch {
	case principalTransitions[e.Transition]:
		a.principals[e.Tenant+"/"+e.Details["name"]] = &loggedPrincipalEntry{index: index, details: e.Details}
	case e.Transition == TransitionSession && e.RecordID == "":
		if len(a.sessions) == 0 {
			a.sessionsFrom = e.Time
		}
		a.sessions[e.Tenant+"\x00"+e.Details["session"]] = e.Details
	case e.Transition == TransitionObservation && e.RecordID == "":
		a.observed[e.Tenant+"\x00"+e.Details["observation"]] = e.Details
	case e.Transition == TransitionEndorse:
		a.endorsed[e.Tenant+"\x00"+e.Details["endorsement"]] = loggedEndorsement{index: index, time: e.Time, details: e.Details}
	case e.Transition == TransitionPause || e.Transition == TransitionResume:
		a.pauses[e.Tenant+"\x00"+e.Details["pause"]] = e.Details
	case e.Transition == TransitionConfirmAction || e.Transition == "gate":
		a.grants.add(e)
	case e.Transition == "policy":
		a.policies[e.Tenant] = loggedPolicy{index: index, version: e.PolicyVersion}
	case e.Transition == "suspend":
		for _, id := range e.RecordIDs {
			k := e.Tenant + "\x00" + id
			rc := a.receipts[k]
			rc.index, rc.actor, rc.cascade = index, e.Actor, true
			a.receipts[k] = rc
		}
	case e.RecordID != "":
		k := e.Tenant + "\x00" + e.RecordID
		a.receipts[k] = loggedReceipt{index: index, actor: e.Actor, time: e.Time, policy: e.PolicyVersion,
			reason: e.Details["reason"], rules: e.Details["rules"], errText: e.Details["error"]}
		rc := a.receipts[k]
		rc.inputs, rc.hasInputs = e.Details[detailInputs]
		a.receipts[k] = rc
		if st := State(e.NewState); st.Terminal() {
			a.tombstones[k] = st
		}
		if e.Details["erased"] == "true" {
			a.erased[k] = true
		}
	}
}

// compareAccess checks, in the store's transaction tx, the principals, the
// tenants' policies, the tombstones and the records' receipts against the
// log. Principals whose latest entry predates the token and sealed-key
// digests are listed in rep.Uncovered, not reported as differences.
func (s *Service) compareAccess(ctx context.Context, tx Tx, a *accessLog, rep *VerifyReport) error {
	if err := comparePrincipals(ctx, tx, a, rep); err != nil {
		return err
	}
	tenants := map[string]bool{}
	ps, err := tx.Principals(ctx, "")
	if err != nil {
		return err
	}
	for _, p := range ps {
		tenants[p.Tenant] = true
	}
	for t := range a.policies {
		tenants[t] = true
	}
	for _, t := range slices.Sorted(mapKeys(tenants)) {
		if err := comparePolicy(ctx, tx, t, a.policies[t]); err != nil {
			return err
		}
	}
	if err := compareTombstones(ctx, tx, a); err != nil {
		return err
	}
	if err := s.compareSessions(ctx, tx, a, rep); err != nil {
		return err
	}
	if err := comparePauses(ctx, tx, a.pauses); err != nil {
		return err
	}
	if err := compareGrants(ctx, tx, a.grants); err != nil {
		return err
	}
	if err := compareEndorsements(ctx, tx, a.endorsed); err != nil {
		return err
	}
	return tx.ScanRecords(ctx, "", func(r *Record) error { return compareReceipt(r, a.receipts[r.Tenant+"\x00"+r.ID]) })
}

// erasedCopy reports whether o is an observation emptied with the record
// whose body it copied (eraseRecord): its text is empty and its source
// names a record the log says was erased.
func (a *accessLog) erasedCopy(o *Observation) bool {
	id, ok := strings.CutPrefix(o.SourceRef, ObservationSourceOf(""))
	return ok && o.Text == "" && a.erased[o.Tenant+"\x00"+id]
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// comparePrincipals compares every stored principal with its latest log
// entry, and finds principals the log names that the store lost.
func comparePrincipals(ctx context.Context, tx Tx, a *accessLog, rep *VerifyReport) error {
	ps, err := tx.Principals(ctx, "")
	if err != nil {
		return err
	}
	stored := map[string]bool{}
	for _, p := range ps {
		id := p.ID()
		stored[id] = true
		lp, ok := a.principals[id]
		if !ok {
			return differ("principal %s is in the store but no log entry introduced it", id)
		}
		if f := principalDiff(p, lp.details); f != "" {
			return differ("principal %s: %s: the stored value differs from its latest log entry %d", id, fieldName(f), lp.index)
		}
		if p.LogIndex != int64(lp.index) {
			return differ("principal %s: its row points at log entry %d but its latest entry is %d", id, p.LogIndex, lp.index)
		}
		if _, ok := lp.details[detailTokenDigest]; !ok {
			rep.Uncovered = append(rep.Uncovered, id+": token hash and sealed key (its log entry predates their coverage)")
		}
	}
	for _, id := range slices.Sorted(mapKeys(a.principals)) {
		if !stored[id] {
			return differ("principal %s is in the log (entry %d) but missing from the store (its row was deleted)", id, a.principals[id].index)
		}
	}
	return nil
}

// comparePolicy checks a tenant's active stored policy against its latest
// policy entry.
func comparePolicy(ctx context.Context, tx Tx, tenant string, lp loggedPolicy) error {
	text, err := tx.Policy(ctx, tenant)
	switch {
	case err == nil && lp.version == "":
		return differ("tenant %s: its stored policy (version %s) was never logged", tenant, PolicyVersion(text))
	case err == nil && PolicyVersion(text) != lp.version:
		return differ("tenant %s: its stored policy is version %s but its latest policy entry (%d) sets %s", tenant, PolicyVersion(text), lp.index, lp.version)
	case errIsNotFound(err) && lp.version != "":
		return differ("tenant %s: the log sets policy %s (entry %d) but the store holds no policy", tenant, lp.version, lp.index)
	case err != nil && !errIsNotFound(err):
		return err
	}
	return nil
}

// compareTombstones checks the registry of retired and rejected ids in the
// store against the terminal states the log's entries reached.
func compareTombstones(ctx context.Context, tx Tx, a *accessLog) error {
	seen := 0
	err := tx.Tombstones(ctx, func(tenant, id string, st State) error {
		want, ok := a.tombstones[tenant+"\x00"+id]
		if !ok {
			return differ("tombstone of %s (%s) has no retire or reject entry in the log", id, st)
		}
		if st != want {
			return differ("tombstone of %s says %s but the log's last terminal entry says %s", id, st, want)
		}
		seen++
		return nil
	})
	if err != nil {
		return err
	}
	if seen != len(a.tombstones) {
		for _, k := range slices.Sorted(mapKeys(a.tombstones)) {
			tenant, id, _ := strings.Cut(k, "\x00")
			if dead, err := tx.Tombstoned(ctx, tenant, id); err != nil {
				return err
			} else if !dead {
				return differ("record %s was %s in the log but its tombstone is missing (a restore could revive it)", id, a.tombstones[k])
			}
		}
	}
	return nil
}

// detailInputs is the detail of a record entry that commits to its
// receipt's admission inputs.
const detailInputs = "inputs_sha256"

// inputsDigest is the hex SHA-256 of a receipt's inputs, sorted by name.
func inputsDigest(in map[string]string) string {
	h := sha256.New()
	for _, k := range slices.Sorted(mapKeys(in)) {
		h.Write([]byte(k + "\x00" + in[k] + "\x00"))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// compareReceipt checks the receipt a record shows to clients against its
// latest entry: the log index, actor, time, reason, rules and error, and
// the record's policy version, and the admission inputs where the entry
// commits to them.
func compareReceipt(r *Record, x loggedReceipt) error {
	if r.PolicyVersion != x.policy {
		return differ("record %s: policy version is %q in the store but %q in the log", r.ID, r.PolicyVersion, x.policy)
	}
	rc := r.Receipt
	if rc == nil {
		return nil
	}
	switch {
	case rc.LogIndex != x.index:
		return differ("record %s: its receipt names log entry %d but its latest entry is %d", r.ID, rc.LogIndex, x.index)
	case rc.Actor != x.actor:
		return differ("record %s: its receipt names actor %s but the log entry's actor is %s", r.ID, rc.Actor, x.actor)
	case x.cascade && strings.Join(rc.Rules, ",") != "cascade":
		return differ("record %s: its receipt names rules %q but its latest entry is a cascade suspension", r.ID, strings.Join(rc.Rules, ","))
	case x.cascade:
	case !rc.Time.Equal(x.time):
		return differ("record %s: its receipt's time differs from its log entry's", r.ID)
	case rc.Reason != x.reason:
		return differ("record %s: its receipt's reason %q differs from its log entry's %q", r.ID, rc.Reason, x.reason)
	case strings.Join(rc.Rules, ",") != x.rules:
		return differ("record %s: its receipt names rules %q but its log entry %q", r.ID, strings.Join(rc.Rules, ","), x.rules)
	case rc.Error != x.errText:
		return differ("record %s: its receipt's error %q differs from its log entry's %q", r.ID, rc.Error, x.errText)
	case x.hasInputs && inputsDigest(rc.Inputs) != x.inputs:
		return differ("record %s: its receipt's admission inputs differ from the ones its log entry commits to", r.ID)
	}
	return nil
}

func errIsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

// compareSessions checks every stored session and observation against its
// entry, and finds logged ones the store lost. Sessions opened before the
// log held any session entry (an older store) are not covered, nor their
// observations: rep.Uncovered counts them.
func (s *Service) compareSessions(ctx context.Context, tx Tx, a *accessLog, rep *VerifyReport) error {
	legacy := map[string]bool{}
	seen := 0
	err := tx.ScanSessions(ctx, func(sess *Session) error {
		k := sess.Tenant + "\x00" + sess.ID
		d, ok := a.sessions[k]
		switch {
		case !ok && (len(a.sessions) == 0 || sess.CreatedAt.Before(a.sessionsFrom)):
			legacy[k] = true
			return nil
		case !ok:
			return differ("session %s is in the store but no log entry opened it", sess.ID)
		case d["subject"] != sess.Subject:
			return differ("session %s: subject is %q in the store but %q in the log", sess.ID, sess.Subject, d["subject"])
		case d["opener"] != sess.Opener:
			return differ("session %s: opened by %q in the store but %q in the log", sess.ID, sess.Opener, d["opener"])
		}
		seen++
		return nil
	})
	if err != nil {
		return err
	}
	if seen != len(a.sessions) {
		return differ("the log opens %d sessions but the store holds %d of them (a session row was deleted)", len(a.sessions), seen)
	}
	seen = 0
	legacyObs := 0
	err = tx.ScanObservations(ctx, func(o *Observation) error {
		d, ok := a.observed[o.Tenant+"\x00"+o.ID]
		switch {
		case !ok && legacy[o.Tenant+"\x00"+o.Session]:
			legacyObs++
			return nil
		case !ok:
			return differ("observation %s of session %s is in the store but not in the log", o.ID, o.Session)
		case d["session"] != o.Session || d["channel"] != o.Channel || d["authority"] != o.Authority.String() || d["source_ref"] != o.SourceRef:
			return differ("observation %s of session %s: its session, channel, authority or source differ from its log entry", o.ID, o.Session)
		case d["text_commitment"] != s.textCommitment(o.Tenant, o.ID, o.Text) && !a.erasedCopy(o):
			return differ("observation %s of session %s: its text differs from the one its log entry commits to", o.ID, o.Session)
		}
		seen++
		return nil
	})
	if err != nil {
		return err
	}
	if seen != len(a.observed) {
		for _, k := range slices.Sorted(mapKeys(a.observed)) {
			d := a.observed[k]
			tenant, id, _ := strings.Cut(k, "\x00")
			obs, err := tx.Observations(ctx, tenant, d["session"])
			if err != nil {
				return err
			}
			if !slices.ContainsFunc(obs, func(o *Observation) bool { return o.ID == id }) {
				return differ("observation %s of session %s is in the log but missing from the store (deleting it raises the session's floor)", id, d["session"])
			}
		}
	}
	if len(legacy) > 0 {
		rep.Uncovered = append(rep.Uncovered, fmt.Sprintf("%d sessions and %d observations stored before sessions were logged", len(legacy), legacyObs))
	}
	return nil
}
