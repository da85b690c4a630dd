package custody

import (
	"context"
	"errors"

	"github.com/custody-mem/custody/tlog"
)

// Who may read a log entry in full (its leaf bytes and decoded fields).
// Everyone may read every entry's index and leaf hash: enough to check
// inclusion and consistency against a checkpoint, and nothing else, since
// the leaf holds the record's metadata and its body commitment is salted
// (BodyHash). Beyond that, within the caller's tenant:
//
//   - admin and auditor principals read every entry;
//   - an entry about records (a transition of one, a cascade suspending
//     several) is read in full by a caller who may read each of those
//     records: the subject owns it (in any state, as history shows the
//     owner), or it is eligible for the subject (the decision of Get), or
//     the caller is a reviewer and it waits in the review queue
//     (quarantined). A cascade's cause is one of its records;
//   - a gate decision or an action confirmation is read by its subject,
//     and so are a session's opening and its observations, and the
//     entry that closes an erasure request of the subject (each erased
//     record's own entry is its owner's, as above);
//   - a policy change by everyone (GET /v1/policy shows the policy);
//   - a principal's creation and its changes (update, rotate, revoke),
//     a pause and its resumption,
//     and any entry of a kind not named here, only
//     by admin and auditor.
//
// Another tenant's entries are never read in full, whoever asks.
type entryReader struct {
	s     *Service
	c     *Caller
	seen  map[string]bool // record id (or "session\x00"+id) → readable
	every bool            // the caller reads the whole tenant's entries
}

func (s *Service) entryReader(c *Caller) *entryReader {
	return &entryReader{s: s, c: c, seen: map[string]bool{}, every: c.Principal.HasAny(RoleAdmin, RoleAuditor)}
}

// readable reports whether the caller may read e, a leaf of its tenant, in
// full.
func (er *entryReader) readable(ctx context.Context, e *tlog.Entry) (bool, error) {
	if e.Tenant != er.c.Tenant() {
		return false, nil
	}
	if er.every {
		return true, nil
	}
	switch e.Transition {
	case "policy":
		return true, nil
	case "gate", "confirm_action", TransitionEndorse:
		return e.Details["subject"] == er.c.Subject.Name, nil
	case TransitionSession, TransitionErasure:
		return e.Details["subject"] == er.c.Subject.Name, nil
	case TransitionObservation:
		return er.session(ctx, e.Details["session"])
	case TransitionPrincipal, TransitionPrincipalUpdate, TransitionPrincipalRotate, TransitionPrincipalRevoke,
		TransitionPause, TransitionResume:
		return false, nil
	case "suspend":
		ids := append([]string{e.Details["cause"]}, e.RecordIDs...)
		for _, id := range ids {
			if ok, err := er.record(ctx, id); !ok || err != nil {
				return false, err
			}
		}
		return len(e.RecordIDs) > 0, nil
	}
	if e.RecordID != "" {
		return er.record(ctx, e.RecordID)
	}
	return false, nil
}

// record reports whether the caller may read the record id (see above).
func (er *entryReader) record(ctx context.Context, id string) (bool, error) {
	if id == "" {
		return false, nil
	}
	if ok, done := er.seen[id]; done {
		return ok, nil
	}
	ok, err := er.decide(ctx, id)
	if err == nil {
		er.seen[id] = ok
	}
	return ok, err
}

// session reports whether the subject is the subject of session id.
func (er *entryReader) session(ctx context.Context, id string) (bool, error) {
	if ok, done := er.seen["session\x00"+id]; done {
		return ok, nil
	}
	var sess *Session
	err := er.s.store.View(ctx, func(tx Tx) error {
		var err error
		sess, err = tx.Session(ctx, er.c.Tenant(), id)
		return err
	})
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	ok := sess.Subject == er.c.Subject.Name
	er.seen["session\x00"+id] = ok
	return ok, nil
}

func (er *entryReader) decide(ctx context.Context, id string) (bool, error) {
	_, err := er.s.store.Get(ctx, er.c.scope(er.s.now()), id)
	if err == nil {
		return true, nil // what Get returns to the subject
	}
	if !errors.Is(err, ErrNotFound) {
		return false, err
	}
	var r *Record
	err = er.s.store.View(ctx, func(tx Tx) error {
		r, err = tx.Record(ctx, er.c.Tenant(), id)
		return err
	})
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return r.Owner == er.c.Subject.Name || (er.c.Principal.Has(RoleReviewer) && r.State == StateQuarantined), nil
}
