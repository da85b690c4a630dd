package custody

import (
	"context"
	"time"
)

// Session is one agent run for one subject. The harness records what entered
// the model's context as observations; the lowest authority observed is the
// session's floor, and an agent-channel write in the session carries at most
// that authority (design rule 7).
type Session struct {
	ID        string    `json:"id"`
	Tenant    string    `json:"-"`
	Subject   string    `json:"subject"`
	Opener    string    `json:"opened_by"`
	CreatedAt time.Time `json:"created_at"`
	Floor     Authority `json:"floor"`
	External  bool      `json:"observed_external"`
}

// Observation is one piece of content that entered the model's context.
type Observation struct {
	ID        string    `json:"id"`
	Tenant    string    `json:"-"`
	Session   string    `json:"session"`
	Channel   string    `json:"channel"`
	Text      string    `json:"text"`
	SourceRef string    `json:"source_ref"`
	Authority Authority `json:"authority"`
	CreatedAt time.Time `json:"created_at"`
}

// OpenSession opens a session for the caller's subject.
func (s *Service) OpenSession(ctx context.Context, c *Caller) (*Session, error) {
	sess := &Session{
		ID: s.newID(), Tenant: c.Tenant(), Subject: c.Subject.Name, Opener: c.Principal.ID(),
		CreatedAt: s.now(), Floor: AuthorityConfirmed,
	}
	err := s.update(ctx, func(tx Tx) error {
		if err := tx.InsertSession(ctx, sess); err != nil {
			return err
		}
		return s.logSession(ctx, tx, c, sess)
	})
	if err != nil {
		return nil, err
	}
	return sess, nil
}

// ObservationInput is what a harness reports entering the model's context.
type ObservationInput struct {
	Channel   string
	Text      string
	SourceRef string
}

// Observe records an observation in a session. The channel is checked
// against the caller's registered channels like a write's: a harness that may
// not assert "user" cannot claim a web page came from the user.
func (s *Service) Observe(ctx context.Context, c *Caller, sessionID string, in ObservationInput) (*Session, error) {
	if err := ValidChannel(in.Channel); err != nil {
		return nil, err
	}
	if !c.Principal.MayAssert(in.Channel) && ChannelAuthority(in.Channel) > AuthorityExternal {
		return nil, forbidden("principal %s may not assert channel %q; register it with --channel %s", c.Principal.ID(), in.Channel, in.Channel)
	}
	if err := validText("text", in.Text, false); err != nil {
		return nil, err
	}
	if len(in.Text) > s.opts.maxBody() {
		return nil, invalid("text", "observation text is longer than the body limit of %d bytes", s.opts.maxBody())
	}
	var sess *Session
	err := s.update(ctx, func(tx Tx) error {
		var err error
		if sess, err = s.session(ctx, tx, c, sessionID); err != nil {
			return err
		}
		o := &Observation{
			ID: s.newID(), Tenant: c.Tenant(), Session: sess.ID, Channel: in.Channel, Text: in.Text,
			SourceRef: in.SourceRef, Authority: min(ChannelAuthority(in.Channel), AuthorityUser), CreatedAt: s.now(),
		}
		if err := tx.AddObservation(ctx, o); err != nil {
			return err
		}
		if err := s.logObservation(ctx, tx, c, o); err != nil {
			return err
		}
		sess.Floor = min(sess.Floor, o.Authority)
		sess.External = sess.External || o.Authority == AuthorityExternal
		return nil
	})
	return sess, err
}

// session loads a session of the caller's subject; any other is not found.
func (s *Service) session(ctx context.Context, tx Tx, c *Caller, id string) (*Session, error) {
	sess, err := tx.Session(ctx, c.Tenant(), id)
	if err != nil {
		return nil, err
	}
	if sess.Subject != c.Subject.Name {
		return nil, notFound("session")
	}
	return sess, nil
}
