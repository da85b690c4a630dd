package custody

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/custody-mem/custody/tlog"
)

// Endorsements: the user says which document an action may use. When the
// user's own request names the data ("update my account information from
// address-change.txt"), the harness records it as an endorsement of that
// source for the named actions in the session. A value found in an
// observation of the session with that source_ref then backs exactly
// those actions at user authority; every other action still treats the
// source as the untrusted content it is, so an instruction in the same
// file to send money is still refused. The trusted request decides what
// the untrusted data may be used for, as CaMeL separates a trusted query's
// control flow from the data it reads.
//
// Only the subject's own user credential endorses (an agent principal, and
// so the model, never can; through MCP the user answers an elicitation),
// and each endorsement is logged, signed by the subject.

// TransitionEndorse is the transition of an endorsement's log entry.
const TransitionEndorse = "endorse"

// Endorsement bounds.
const (
	MaxEndorsedActions = 16
	// MaxEndorsementsPerSession bounds the endorsements one session holds.
	MaxEndorsementsPerSession = 64
)

// Endorsement is the subject's word that values from a source may back
// named actions in one session.
type Endorsement struct {
	ID        string     `json:"id"`
	Tenant    string     `json:"-"`
	Session   string     `json:"session"`
	Subject   string     `json:"subject"`
	SourceRef string     `json:"source_ref"`
	Actions   []string   `json:"actions"`
	Until     *time.Time `json:"until,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
	LogIndex  uint64     `json:"log_index"`
}

// Covers reports whether the endorsement holds for action at now.
func (e *Endorsement) Covers(action string, now time.Time) bool {
	return (e.Until == nil || now.Before(*e.Until)) && slices.Contains(e.Actions, action)
}

// EndorseInput is an endorsement asked for.
type EndorseInput struct {
	SourceRef string
	Actions   []string
	Until     *time.Time
}

// Endorse records the subject's endorsement of a source for actions in a
// session of hers. Only her own user credential may endorse.
func (s *Service) Endorse(ctx context.Context, c *Caller, sessionID string, in EndorseInput) (*Endorsement, error) {
	if !c.Principal.Has(RoleUser) || c.Principal.Name != c.Subject.Name || !c.Principal.MayAssert(ChannelUser) {
		return nil, forbidden("only the subject's own user credential, on the user channel, can endorse a source: the harness records the user's request with the user's token, or asks the user (MCP elicitation)")
	}
	if err := validText("source_ref", in.SourceRef, true); err != nil {
		return nil, err
	}
	if len(in.SourceRef) > 2048 {
		return nil, invalid("source_ref", "source_ref is longer than 2048 bytes")
	}
	if len(in.Actions) == 0 || len(in.Actions) > MaxEndorsedActions {
		return nil, invalid("actions", "name 1 to %d actions the source may be used for", MaxEndorsedActions)
	}
	for _, a := range in.Actions {
		if err := validAction(a); err != nil {
			return nil, err
		}
		if strings.ContainsAny(a, ",*") {
			return nil, invalid("actions", "action %q: name actions exactly, without ',' or '*'", a)
		}
	}
	now := s.now()
	if in.Until != nil && !in.Until.After(now) {
		return nil, invalid("until", "until must be in the future")
	}
	e := &Endorsement{ID: s.newID(), Tenant: c.Tenant(), Session: sessionID, Subject: c.Subject.Name, SourceRef: in.SourceRef,
		Actions: uniq(slices.Clone(in.Actions)), Until: in.Until, CreatedAt: now}
	if e.Until != nil {
		u := e.Until.UTC()
		e.Until = &u
	}
	err := s.update(ctx, func(tx Tx) error {
		if _, err := s.session(ctx, tx, c, sessionID); err != nil {
			return err
		}
		have, err := tx.Endorsements(ctx, e.Tenant, sessionID)
		if err != nil {
			return err
		}
		if len(have) >= MaxEndorsementsPerSession {
			return invalid("session", "session %s holds %d endorsements, the most one session may; open a new session", sessionID, len(have))
		}
		if e.LogIndex, err = s.appendAs(ctx, tx, c.Principal, endorsementEntry(e)); err != nil {
			return err
		}
		return tx.InsertEndorsement(ctx, e)
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

// endorsementEntry is the log entry of e.
func endorsementEntry(e *Endorsement) *tlog.Entry {
	until := ""
	if e.Until != nil {
		until = e.Until.Format(time.RFC3339Nano)
	}
	return &tlog.Entry{Tenant: e.Tenant, Transition: TransitionEndorse, Time: e.CreatedAt,
		Details: map[string]string{
			"endorsement": e.ID, "session": e.Session, "subject": e.Subject, "source_ref": e.SourceRef,
			"actions": strings.Join(e.Actions, ","), "until": until,
		}}
}

// loggedEndorsement is what verify's replay keeps of an endorse entry.
type loggedEndorsement struct {
	index   uint64
	time    time.Time
	details map[string]string
}

// compareEndorsements checks every stored endorsement against its log
// entry, and finds logged ones the store lost (logged: the endorse
// entries, by tenant\x00id).
func compareEndorsements(ctx context.Context, tx Tx, logged map[string]loggedEndorsement) error {
	seen := 0
	err := tx.ScanEndorsements(ctx, func(e *Endorsement) error {
		l, ok := logged[e.Tenant+"\x00"+e.ID]
		switch {
		case !ok:
			return differ("endorsement %s of session %s is in the store but not in the log", e.ID, e.Session)
		case !mapsEqual(l.details, endorsementEntry(e).Details):
			return differ("endorsement %s of session %s: its session, subject, source, actions or time limit differ from its log entry", e.ID, e.Session)
		case l.index != e.LogIndex || !l.time.Equal(e.CreatedAt):
			return differ("endorsement %s of session %s: its log index or time differ from its log entry", e.ID, e.Session)
		}
		seen++
		return nil
	})
	if err != nil {
		return err
	}
	if seen != len(logged) {
		return differ("the log holds %d endorsements but the store %d of them (an endorsement row was deleted)", len(logged), seen)
	}
	return nil
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// String is the endorsement as the gate's reasons name it.
func (e *Endorsement) String() string {
	return fmt.Sprintf("%s endorsed by %s for %s", e.SourceRef, e.Subject, strings.Join(e.Actions, ", "))
}
