package custody

import (
	"context"
	"fmt"
	"time"
)

// What a session was shown. Get, list and search take an optional session:
// the ids its reads returned are recorded (ids and times, never bodies),
// so that when a record is found to be poisoned its impact names the
// sessions it reached, and the sessions still open that retrieved it have
// their floor lowered: what they write next is held for review, as rule 7
// holds what a session writes after it observed outside content.
//
// A session records reads only for the principal that opened it, acting
// for its subject: nobody writes into another's record of what it read
// (which would also let them lower that session's floor).

// DefaultReadRetention is how long what a session's reads returned is kept
// unless Options.ReadRetention says otherwise. Sessions do not close; a
// session counts as still open, for the floor, while its reads are kept.
const DefaultReadRetention = 30 * 24 * time.Hour

// ChannelMemory is the channel of the observation that lowers the floor of
// a session that retrieved a record later withdrawn: content that entered
// the context from memory, no longer backed by it.
const ChannelMemory = "tool:memory"

func (s *Service) readRetention() time.Duration {
	if s.opts.ReadRetention > 0 {
		return s.opts.ReadRetention
	}
	return DefaultReadRetention
}

// readsSince is the oldest read time still kept at now.
func (s *Service) readsSince(now time.Time) time.Time { return now.Add(-s.readRetention()) }

// GetIn is Get recording, when session is set, that session's read.
func (s *Service) GetIn(ctx context.Context, c *Caller, session, id string) (*Record, error) {
	if err := s.readSession(ctx, c, session); err != nil {
		return nil, err
	}
	r, err := s.Get(ctx, c, id)
	if err != nil {
		return nil, err
	}
	return r, s.recordReads(ctx, c, session, ReadGet, []string{r.ID})
}

// ListIn is List recording, when session is set, the ids of the page.
func (s *Service) ListIn(ctx context.Context, c *Caller, session string, in ListInput) (*Page, error) {
	if err := s.readSession(ctx, c, session); err != nil {
		return nil, err
	}
	p, err := s.List(ctx, c, in)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(p.Items))
	for i, r := range p.Items {
		ids[i] = r.ID
	}
	return p, s.recordReads(ctx, c, session, ReadList, ids)
}

// SearchIn is SearchRanked recording, when session is set, the ids of the
// hits.
func (s *Service) SearchIn(ctx context.Context, c *Caller, session string, in SearchInput) (*SearchResult, error) {
	if err := s.readSession(ctx, c, session); err != nil {
		return nil, err
	}
	res, err := s.SearchRanked(ctx, c, in)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(res.Items))
	for i, h := range res.Items {
		ids[i] = h.ID
	}
	return res, s.recordReads(ctx, c, session, ReadSearch, ids)
}

// readSession refuses a session that is not one the caller opened for its
// subject ("": no session, nothing to check). A session of another tenant,
// subject or opener, and one that does not exist, are refused alike.
func (s *Service) readSession(ctx context.Context, c *Caller, id string) error {
	if id == "" {
		return nil
	}
	if !ValidID(id) {
		return invalid("session", "session %q is not a session id; open one with POST /v1/sessions", id)
	}
	return s.store.View(ctx, func(tx Tx) error {
		sess, err := tx.Session(ctx, c.Tenant(), id)
		if err != nil || sess.Subject != c.Subject.Name || sess.Opener != c.Principal.ID() {
			return forbidden("session %s is not a session that %s opened for %s: record reads only in a session you opened (POST /v1/sessions)",
				id, c.Principal.ID(), c.Subject.Name)
		}
		return nil
	})
}

// recordReads notes that session's read returned ids. A read whose
// recording fails answers the error: what a session was shown is recorded
// before it is shown.
func (s *Service) recordReads(ctx context.Context, c *Caller, session string, via ReadVia, ids []string) error {
	if session == "" || len(ids) == 0 {
		return nil
	}
	return s.store.Update(ctx, func(tx Tx) error {
		return tx.RecordReads(ctx, c.Tenant(), session, ids, via, s.now())
	})
}

// PruneReads deletes the reads older than the read retention and says how
// many rows went. The server runs it in the background; reads older than
// the retention are ignored whether or not they were pruned yet.
func (s *Service) PruneReads(ctx context.Context) (int64, error) {
	var n int64
	err := s.store.Update(ctx, func(tx Tx) error {
		var err error
		n, err = tx.PruneReads(ctx, s.readsSince(s.now()))
		return err
	})
	return n, err
}

// lowerReaders lowers the floor of every session whose kept reads returned
// one of ids (a record withdrawn and the descendants the cascade
// suspended): each gets an observation of external authority on
// ChannelMemory naming the record, logged and signed by actor like any
// observation, so verify covers it and the session's next agent writes
// carry at most external authority. A session whose floor is external
// already gets none.
func (s *Service) lowerReaders(ctx context.Context, tx Tx, actor *Principal, root *Record, ids []string) error {
	reads, err := tx.ReadsOf(ctx, root.Tenant, ids, s.readsSince(s.now()))
	if err != nil {
		return err
	}
	done := map[string]bool{}
	for _, rd := range reads {
		if done[rd.Session] {
			continue
		}
		done[rd.Session] = true
		sess, err := tx.Session(ctx, root.Tenant, rd.Session)
		if err != nil {
			return fmt.Errorf("session %s that read %s: %w", rd.Session, rd.Record, err)
		}
		if sess.Floor == AuthorityExternal {
			continue
		}
		text := fmt.Sprintf("memory %s, which this session retrieved, is no longer in force: %s was %s by %s", rd.Record, root.ID, root.State, actor.ID())
		o := &Observation{ID: s.newID(), Tenant: root.Tenant, Session: sess.ID, Channel: ChannelMemory, Text: text,
			SourceRef: "memory:" + rd.Record, Authority: AuthorityExternal, CreatedAt: s.now()}
		if err := tx.AddObservation(ctx, o); err != nil {
			return err
		}
		if _, err := s.appendAs(ctx, tx, actor, s.observationEntry(o)); err != nil {
			return err
		}
	}
	return nil
}
