package custody

import (
	"context"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Candidate is a proposed write. Its control fields come from the request's
// metadata; Body is opaque text and is never parsed for them.
type Candidate struct {
	Namespace   string
	Key         string
	Class       Class
	Body        string
	Channel     string
	Audience    string
	ExpiresAt   *time.Time
	Session     string
	DerivedFrom []Edge
	SourceRef   string
	// Metadata is optional plain data kept with the record (metadata.go).
	Metadata Metadata
}

// Decision is the outcome of a write.
type Decision struct {
	ID        string    `json:"id"`
	State     State     `json:"state"`
	Authority Authority `json:"authority"`
	Reason    string    `json:"reason"`
	Receipt   *Receipt  `json:"receipt"`
	LogIndex  uint64    `json:"log_index"`
	Record    *Record   `json:"-"`
}

func (s *Service) validate(c *Caller, in *Candidate) error {
	if err := ValidNamespace(in.Namespace); err != nil {
		return err
	}
	if err := ValidKey(in.Key); err != nil {
		return err
	}
	if _, err := ParseClass(string(in.Class)); err != nil {
		return err
	}
	if err := ValidChannel(in.Channel); err != nil {
		return err
	}
	if !c.Principal.MayAssert(in.Channel) {
		return forbidden("principal %s may not write on channel %q (registered: %v); a principal asserts only the channels it was created with", c.Principal.ID(), in.Channel, c.Principal.Channels)
	}
	if in.Channel == ChannelDerive && len(in.DerivedFrom) == 0 {
		return invalid("derived_from", "a write on the derive channel must name its parents in derived_from")
	}
	if len(in.Body) > s.opts.maxBody() {
		return invalid("body", "body is %d bytes; the limit is %d", len(in.Body), s.opts.maxBody())
	}
	if err := validText("body", in.Body, true); err != nil {
		return err
	}
	if err := validText("source_ref", in.SourceRef, false); err != nil {
		return err
	}
	aud, err := ParseAudience(in.Audience)
	if err != nil {
		return err
	}
	in.Audience = aud
	if g, ok := cutGroup(aud); ok && !slices.Contains(c.Subject.Groups, g) {
		return forbidden("subject %s is not a member of group %q and cannot share with it", c.Subject.Name, g)
	}
	if in.ExpiresAt != nil && !in.ExpiresAt.After(s.now()) {
		return invalid("expires_at", "expires_at %s is not in the future", in.ExpiresAt.UTC().Format(time.RFC3339))
	}
	if in.ExpiresAt != nil && in.ExpiresAt.After(MaxTime) {
		return invalid("expires_at", "expires_at must be before %s", MaxTime.Format(time.RFC3339))
	}
	if err := ValidMetadata(in.Metadata); err != nil {
		return err
	}
	if len(in.SourceRef) > 2048 {
		return invalid("source_ref", "source_ref is longer than 2048 bytes")
	}
	seen := map[string]bool{}
	for _, e := range in.DerivedFrom {
		if e.Weight < 0 || e.Weight > 1 || e.Weight != e.Weight {
			return invalid("derived_from", "parent %q has weight %v; weights are in [0,1]", e.ID, e.Weight)
		}
		if e.ID == "" || seen[e.ID] {
			return invalid("derived_from", "parent ids must be non-empty and distinct")
		}
		seen[e.ID] = true
	}
	return nil
}

// Remember submits a candidate. The channel must be one the caller's
// principal was registered with; the authority, audience and state are
// computed here from the channel, the session, the parents and the policy,
// and the record, its receipt and its log entry commit in one transaction.
// The decision is made ahead, on the caller's goroutine, and made again in
// the transaction if what it was made on has changed (prepare.go).
func (s *Service) Remember(ctx context.Context, c *Caller, in Candidate) (*Decision, error) {
	d, err := s.remember(ctx, c, in)
	if err != nil {
		return s.rememberAgain(ctx, c, in, err)
	}
	return d, nil
}

// remember is Remember as c is now.
func (s *Service) remember(ctx context.Context, c *Caller, in Candidate) (*Decision, error) {
	if err := s.validate(c, &in); err != nil {
		return nil, err
	}
	r := s.newRecord(c, &in)
	p := s.prepare(ctx, c, r)
	if s.prepared != nil {
		s.prepared(p != nil)
	}
	err := s.update(ctx, func(tx Tx) error {
		return s.admitNew(ctx, tx, c, r, p)
	})
	if err != nil {
		return nil, err
	}
	return decisionOf(r), nil
}

// newRecord is the record a validated candidate of c proposes, with a new
// id, before its decision.
func (s *Service) newRecord(c *Caller, in *Candidate) *Record {
	r := &Record{
		ID: s.newID(), Tenant: c.Tenant(), Owner: c.Subject.Name, Namespace: in.Namespace, Key: in.Key,
		Class: in.Class, Body: in.Body, Channel: in.Channel, Writer: c.Principal.ID(), SourceRef: in.SourceRef,
		Audience: in.Audience, CreatedAt: s.now(), ExpiresAt: in.ExpiresAt, Session: in.Session, Parents: in.DerivedFrom,
		Metadata: maps.Clone(in.Metadata),
	}
	if r.Parents == nil {
		r.Parents = []Edge{}
	}
	return r
}

// decisionOf is the decision admitNew made for r.
func decisionOf(r *Record) *Decision {
	return &Decision{ID: r.ID, State: r.State, Authority: r.Authority, Reason: r.Receipt.Reason, Receipt: r.Receipt, LogIndex: r.LogIndex, Record: r}
}

// admitNew decides a new record inside tx, logs the decision and inserts
// it. p, if not nil, is the decision prepared ahead against a predicted
// state (prepare.go): it is applied as it is when the state admitNew reads
// here is the one predicted, and decided anew otherwise.
func (s *Service) admitNew(ctx context.Context, tx Tx, c *Caller, r *Record, p *prepared) error {
	st, ps, err := s.admitState(ctx, tx, c, r, true, s.now())
	if err != nil {
		return err
	}
	if err := s.applyAdmission(ctx, tx, c, r, st, p); err != nil {
		return err
	}
	s.hints.learn(c, r, st, ps)
	return tx.InsertRecord(ctx, r)
}

// readmit decides an existing record again (rebuild, re-evaluation of a
// pending candidate), logs the decision and updates it. The authority is
// never raised above ceiling when ceiling is set.
// The entry is signed by actor; c is the writer and subject decided for.
func (s *Service) readmit(ctx context.Context, tx Tx, actor *Principal, c *Caller, r *Record, name string, ceiling Authority) error {
	rc, err := s.decide(ctx, tx, c, r, false, ceiling)
	if err != nil {
		return err
	}
	if err := s.transition(ctx, tx, actor, r, name, rc.Decision, rc); err != nil {
		return err
	}
	return tx.UpdateRecord(ctx, r)
}

// decide computes r's authority and audience from its channel, session and
// parents, and asks the tenant's policy, against what tx holds now (see
// admission). It sets the decided fields on r and returns the receipt.
func (s *Service) decide(ctx context.Context, tx Tx, c *Caller, r *Record, fresh bool, ceiling Authority) (*Receipt, error) {
	st, _, err := s.admitState(ctx, tx, c, r, fresh, s.now())
	if err != nil {
		return nil, err
	}
	v := s.admission(c, r, st, fresh, ceiling)
	v.apply(r)
	return v.receipt, nil
}

func cutGroup(aud string) (string, bool) {
	if len(aud) > len(groupPrefix) && aud[:len(groupPrefix)] == groupPrefix {
		return aud[len(groupPrefix):], true
	}
	return "", false
}

// MaxTime is the latest time custody stores: both backends keep nanosecond
// times in 64 bits.
var MaxTime = time.Date(2262, 4, 11, 0, 0, 0, 0, time.UTC)

// validText checks text that the backends store: UTF-8 without NUL bytes
// (PostgreSQL cannot store them, so neither backend takes them).
func validText(field, s string, required bool) error {
	switch {
	case required && s == "":
		return invalid(field, "%s must not be empty", field)
	case !utf8.ValidString(s):
		return invalid(field, "%s must be UTF-8 text", field)
	case strings.ContainsRune(s, 0):
		return invalid(field, "%s must not contain NUL bytes", field)
	}
	return nil
}
