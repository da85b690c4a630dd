package custody

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/custody-mem/custody/tlog"
)

// A pause holds the writes of one principal, or of one channel tenant-wide
// (tool:email after an incident), for a time or until it is resumed: a
// candidate it matches is kept as quarantined, whatever the policy would
// have decided, with the pause named in its receipt's rules ("pause:ID"),
// so that nothing is lost and a reviewer decides. A pause is set and
// resumed by an admin or a reviewer, and each is a server-signed log
// entry.
//
// Pauses are kept in a table of the store, beside the log, rather than
// derived from the log at start: every server over one PostgreSQL store
// sees a pause at the next write without rereading the log, and a start
// does not scan it. verify compares the table with the log's pause and
// resume entries, so that a pause deleted or resumed behind the server's
// back is named.

// Transitions of the entries that set and resume a pause.
const (
	TransitionPause  = "pause"
	TransitionResume = "resume"
)

// Pause is a hold on the writes of a principal (Writer, a name of the
// tenant) or of a channel (Channel).
type Pause struct {
	ID        string     `json:"id"`
	Tenant    string     `json:"tenant"`
	Writer    string     `json:"writer,omitempty"`
	Channel   string     `json:"channel,omitempty"`
	Reason    string     `json:"reason"`
	By        string     `json:"by"`
	CreatedAt time.Time  `json:"created_at"`
	Until     *time.Time `json:"until,omitempty"`
	ResumedAt *time.Time `json:"resumed_at,omitempty"`
	ResumedBy string     `json:"resumed_by,omitempty"`
}

// Active reports whether p holds writes at now.
func (p *Pause) Active(now time.Time) bool {
	return p.ResumedAt == nil && (p.Until == nil || now.Before(*p.Until))
}

// matches reports whether p holds a write by writer (tenant/name) on
// channel.
func (p *Pause) matches(writer, channel string) bool {
	return (p.Writer != "" && p.Tenant+"/"+p.Writer == writer) || (p.Channel != "" && p.Channel == channel)
}

// PauseInput asks for a pause of a writer or a channel (one of the two),
// for For or until Until (neither: until resumed).
type PauseInput struct {
	Writer  string
	Channel string
	For     time.Duration
	Until   time.Time
	Reason  string
}

// mayPause is the check of every pause route: an admin or a reviewer.
func mayPause(c *Caller) error {
	if !c.Principal.HasAny(RoleAdmin, RoleReviewer) {
		return forbidden("principal %s may not pause or resume writes: only an admin or a reviewer may", c.Principal.ID())
	}
	return nil
}

// SetPause pauses the writes of a principal or a channel of the caller's
// tenant.
func (s *Service) SetPause(ctx context.Context, c *Caller, in PauseInput) (*Pause, error) {
	if err := mayPause(c); err != nil {
		return nil, err
	}
	now := s.now()
	p := &Pause{ID: s.newID(), Tenant: c.Tenant(), Writer: in.Writer, Channel: in.Channel, Reason: in.Reason, By: c.Principal.ID(), CreatedAt: now}
	switch {
	case (in.Writer == "") == (in.Channel == ""):
		return nil, invalid("writer", "name the writer (a principal of the tenant) or the channel to pause, one of the two")
	case in.For < 0:
		return nil, invalid("for", "for must be a positive duration, like 2h")
	case in.For > 0 && !in.Until.IsZero():
		return nil, invalid("until", "give for or until, not both")
	case !in.Until.IsZero() && !in.Until.After(now):
		return nil, invalid("until", "until %s is not in the future", in.Until.Format(time.RFC3339))
	case in.Reason == "":
		return nil, invalid("reason", "say why the writes are paused (reason); it is shown in the receipts of the held candidates")
	}
	if err := validReason(in.Reason); err != nil {
		return nil, err
	}
	if in.Channel != "" {
		if err := ValidChannel(in.Channel); err != nil {
			return nil, err
		}
	}
	if in.For > 0 {
		u := now.Add(in.For)
		p.Until = &u
	} else if !in.Until.IsZero() {
		u := in.Until.UTC()
		p.Until = &u
	}
	err := s.update(ctx, func(tx Tx) error {
		if p.Writer != "" {
			if _, err := tx.Principal(ctx, p.Tenant, p.Writer); errors.Is(err, ErrNotFound) {
				return invalid("writer", "no principal %q in tenant %s; name a principal of the tenant", p.Writer, p.Tenant)
			} else if err != nil {
				return err
			}
		}
		if err := tx.InsertPause(ctx, p); err != nil {
			return err
		}
		_, err := s.appendServer(ctx, tx, &tlog.Entry{Tenant: p.Tenant, Transition: TransitionPause, Details: pauseDetails(p)})
		return err
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// ResumePause ends a pause; the writes it held stay quarantined for review.
func (s *Service) ResumePause(ctx context.Context, c *Caller, id string) (*Pause, error) {
	if err := mayPause(c); err != nil {
		return nil, err
	}
	var p *Pause
	err := s.update(ctx, func(tx Tx) error {
		ps, err := tx.Pauses(ctx, c.Tenant())
		if err != nil {
			return err
		}
		i := slices.IndexFunc(ps, func(p *Pause) bool { return p.ID == id })
		if i < 0 {
			return notFound("pause")
		}
		p = ps[i]
		if p.ResumedAt != nil {
			return conflict("pause %s was resumed already, at %s by %s", id, p.ResumedAt.Format(time.RFC3339), p.ResumedBy)
		}
		now := s.now()
		p.ResumedAt, p.ResumedBy = &now, c.Principal.ID()
		if err := tx.ResumePause(ctx, p); err != nil {
			return err
		}
		_, err = s.appendServer(ctx, tx, &tlog.Entry{Tenant: p.Tenant, Transition: TransitionResume, Details: pauseDetails(p)})
		return err
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Pauses lists the pauses of the caller's tenant, oldest first: those
// still active, or all of them.
func (s *Service) Pauses(ctx context.Context, c *Caller, all bool) ([]*Pause, error) {
	if err := mayPause(c); err != nil {
		return nil, err
	}
	var ps []*Pause
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		ps, err = tx.Pauses(ctx, c.Tenant())
		return err
	})
	if err != nil || all {
		return ps, err
	}
	now := s.now()
	return slices.DeleteFunc(ps, func(p *Pause) bool { return !p.Active(now) }), nil
}

// pauseDetails is what a pause or resume entry states of p. Its times
// are RFC 3339 with nanoseconds in UTC, as a record entry's are ("" for
// none); entries written before state them in Unix nanoseconds
// (sameDetail).
func pauseDetails(p *Pause) map[string]string {
	return map[string]string{"pause": p.ID, "writer": p.Writer, "channel": p.Channel, "reason": p.Reason, "by": p.By,
		"created_at": fmtTime(&p.CreatedAt), "until": fmtTime(p.Until), "resumed_at": fmtTime(p.ResumedAt), "resumed_by": p.ResumedBy}
}

// pauseTimes are the details of a pause entry that state an instant.
var pauseTimes = map[string]bool{"created_at": true, "until": true, "resumed_at": true}

// sameDetail reports whether a pause entry's logged value of field states
// what the store's pause does (stored, as pauseDetails gives it): equal,
// or, for a time, an older entry's Unix nanoseconds of the same instant.
func sameDetail(field, logged, stored string) bool {
	if logged == stored {
		return true
	}
	if !pauseTimes[field] || logged == "" || stored == "" {
		return false
	}
	n, err := strconv.ParseInt(logged, 10, 64)
	if err != nil {
		return false
	}
	t, err := time.Parse(time.RFC3339Nano, stored)
	return err == nil && t.UnixNano() == n
}

// comparePauses checks every stored pause against its latest entry, and
// finds logged pauses the store lost.
func comparePauses(ctx context.Context, tx Tx, logged map[string]map[string]string) error {
	ps, err := tx.Pauses(ctx, "")
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, p := range ps {
		k := p.Tenant + "\x00" + p.ID
		d, ok := logged[k]
		if !ok {
			return differ("pause %s is in the store but no log entry set it", p.ID)
		}
		got := pauseDetails(p)
		for _, f := range []string{"writer", "channel", "reason", "by", "created_at", "until", "resumed_at", "resumed_by"} {
			if !sameDetail(f, d[f], got[f]) {
				return differ("pause %s: its %s differs from its log entry's (a pause edited outside custody)", p.ID, f)
			}
		}
		seen[k] = true
	}
	for _, k := range slices.Sorted(mapKeys(logged)) {
		if !seen[k] {
			return differ("pause %s is in the log but missing from the store (the writes it holds would be admitted)", logged[k]["pause"])
		}
	}
	return nil
}
