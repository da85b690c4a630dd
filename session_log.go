package custody

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"

	"github.com/custody-mem/custody/tlog"
)

// A session's subject and its observations decide what its writes are
// worth (the floor) and what the gate traces, so each is logged when it is
// stored: opening a session is a "session" entry naming the session, its
// subject and its opener; each observation is an "observation" entry with
// its session, channel and authority, and a commitment to its text that
// only the server key can recompute (a keyed hash: the log is read by the
// tenant's users, and a short text could be guessed from a plain hash).
// Verify compares the stored sessions and observations with these entries:
// a session given to another subject, an observation deleted (which would
// raise the session's floor), added or rewritten is a difference.

// Transitions of the session entries.
const (
	TransitionSession     = "session"
	TransitionObservation = "observation"
)

// sessionEntry is the log entry of opening sess.
func sessionEntry(sess *Session) *tlog.Entry {
	return &tlog.Entry{Tenant: sess.Tenant, Transition: TransitionSession, Time: sess.CreatedAt,
		Details: map[string]string{"session": sess.ID, "subject": sess.Subject, "opener": sess.Opener}}
}

// observationEntry is the log entry of storing o.
func (s *Service) observationEntry(o *Observation) *tlog.Entry {
	return &tlog.Entry{Tenant: o.Tenant, Transition: TransitionObservation, Time: o.CreatedAt,
		Details: map[string]string{
			"observation": o.ID, "session": o.Session, "channel": o.Channel, "authority": o.Authority.String(),
			"source_ref": o.SourceRef, "text_commitment": s.textCommitment(o.Tenant, o.ID, o.Text),
		}}
}

// textCommitment is HMAC-SHA256 of an observation's text under a key
// derived from the server's signing key, bound to the observation.
func (s *Service) textCommitment(tenant, id, text string) string {
	m := hmac.New(sha256.New, s.commitKey)
	m.Write([]byte(tenant + "\x00" + id + "\x00"))
	m.Write([]byte(text))
	return hex.EncodeToString(m.Sum(nil))
}

// commitKeyOf derives the observation commitment key from the server key.
func commitKeyOf(key *tlog.ServerKey) []byte {
	if key == nil {
		return nil
	}
	d := sha256.Sum256(append([]byte("custody observation commitment key\x00"), key.SigningKey().Seed()...))
	return d[:]
}

// logSession appends the entry of opening sess, signed by its opener.
func (s *Service) logSession(ctx context.Context, tx Tx, c *Caller, sess *Session) error {
	_, err := s.appendAs(ctx, tx, c.Principal, sessionEntry(sess))
	return err
}

// logObservation appends the entry of storing o, signed by the principal
// that reported it.
func (s *Service) logObservation(ctx context.Context, tx Tx, c *Caller, o *Observation) error {
	_, err := s.appendAs(ctx, tx, c.Principal, s.observationEntry(o))
	return err
}
