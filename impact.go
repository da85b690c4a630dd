package custody

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"time"
)

// The impact of a suspect record: what it reached before it was found out.
// Its descendants (the records the cascade suspends), the sessions whose
// reads returned it or one of them (session_reads.go), and the gate
// decisions that cited it or one of them as a justification or traced an
// argument value to it, each with its times. A reviewer or an admin of the
// tenant asks for it; it carries ids, states and times, never a body.

// ImpactRecord is a record of an impact, without its body.
type ImpactRecord struct {
	ID        string    `json:"id"`
	Owner     string    `json:"owner"`
	Namespace string    `json:"namespace"`
	Key       string    `json:"key,omitempty"`
	Class     Class     `json:"class"`
	Channel   string    `json:"channel"`
	Authority Authority `json:"authority"`
	State     State     `json:"state"`
	CreatedAt time.Time `json:"created_at"`
}

// ImpactSession is a session whose reads returned the record or one of its
// descendants.
type ImpactSession struct {
	Session  string    `json:"session"`
	Subject  string    `json:"subject"`
	OpenedBy string    `json:"opened_by"`
	Record   string    `json:"record" doc:"the record it read: the one asked about or a descendant"`
	Via      []string  `json:"via" doc:"the retrievals that returned it: get, list, search"`
	Reads    int64     `json:"reads"`
	FirstAt  time.Time `json:"first_read_at"`
	LastAt   time.Time `json:"last_read_at"`
}

// Impact is what a record reached.
type Impact struct {
	Record      ImpactRecord    `json:"record"`
	Descendants []ImpactRecord  `json:"descendants"`
	Sessions    []ImpactSession `json:"sessions"`
	Decisions   []GateRef       `json:"decisions"`
	// ReadsSince is where the kept reads begin: reads before it are
	// past the read retention.
	ReadsSince time.Time `json:"reads_since" doc:"reads before this time are past the read retention and not listed"`
}

// Impact lists what record id reached, for a reviewer or an admin of its
// tenant; to anyone else every id is not found.
func (s *Service) Impact(ctx context.Context, c *Caller, id string) (*Impact, error) {
	if !c.Principal.HasAny(RoleReviewer, RoleAdmin) {
		// Not 403: whether the id names a record of the tenant is not
		// for a caller who may not inspect every record to learn.
		return nil, notFound("record")
	}
	return s.ImpactOf(ctx, c.Tenant(), id)
}

// ImpactOf is the impact of record id of tenant, for the operator of the
// store (custody impact --db).
func (s *Service) ImpactOf(ctx context.Context, tenant, id string) (*Impact, error) {
	now := s.now()
	out := &Impact{Descendants: []ImpactRecord{}, Sessions: []ImpactSession{}, Decisions: []GateRef{}, ReadsSince: s.readsSince(now)}
	err := s.store.View(ctx, func(tx Tx) error {
		r, err := tx.Record(ctx, tenant, id)
		if err != nil {
			return notFound("record")
		}
		out.Record = impactRecord(r)
		desc, err := tx.Descendants(ctx, r.Tenant, r.ID)
		if err != nil {
			return err
		}
		ids := []string{r.ID}
		for _, d := range desc {
			dr, err := tx.Record(ctx, r.Tenant, d.ID)
			if err != nil {
				return err
			}
			out.Descendants = append(out.Descendants, impactRecord(dr))
			ids = append(ids, d.ID)
		}
		reads, err := tx.ReadsOf(ctx, r.Tenant, ids, out.ReadsSince)
		if err != nil {
			return err
		}
		sessions := map[string]*Session{}
		for _, rd := range reads {
			sess, ok := sessions[rd.Session]
			if !ok {
				if sess, err = tx.Session(ctx, r.Tenant, rd.Session); errors.Is(err, ErrNotFound) {
					sess = &Session{ID: rd.Session} // its row is gone; the reads still name it
				} else if err != nil {
					return err
				}
				sessions[rd.Session] = sess
			}
			out.Sessions = append(out.Sessions, ImpactSession{Session: rd.Session, Subject: sess.Subject, OpenedBy: sess.Opener,
				Record: rd.Record, Via: rd.Via.Names(), Reads: rd.Reads, FirstAt: rd.FirstAt, LastAt: rd.LastAt})
		}
		slices.SortFunc(out.Sessions, func(a, b ImpactSession) int {
			return cmp.Or(a.FirstAt.Compare(b.FirstAt), cmp.Compare(a.Session, b.Session), cmp.Compare(a.Record, b.Record))
		})
		refs, err := tx.GateRefsOf(ctx, r.Tenant, ids)
		if err != nil {
			return err
		}
		out.Decisions = append(out.Decisions, refs...)
		slices.SortFunc(out.Decisions, func(a, b GateRef) int {
			return cmp.Or(cmp.Compare(a.LogIndex, b.LogIndex), cmp.Compare(a.Record, b.Record))
		})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func impactRecord(r *Record) ImpactRecord {
	return ImpactRecord{ID: r.ID, Owner: r.Owner, Namespace: r.Namespace, Key: r.Key, Class: r.Class, Channel: r.Channel,
		Authority: r.Authority, State: r.State, CreatedAt: r.CreatedAt}
}

// noteGate stores what decision d (logged at d.LogIndex) relied on: the
// records its justification named, and those its traced argument values
// were found in, each once (a record both cited and traced counts as
// cited).
func (s *Service) noteGate(ctx context.Context, tx Tx, c *Caller, in GateInput, d *GateDecision) error {
	var refs []GateRef
	seen := map[string]bool{}
	add := func(ids []string, how string) {
		for _, id := range ids {
			if seen[id] {
				continue
			}
			seen[id] = true
			refs = append(refs, GateRef{Tenant: c.Tenant(), Record: id, LogIndex: d.LogIndex, How: how, Action: in.Action,
				Decision: d.Decision, Subject: c.Subject.Name, Session: in.Session, At: s.now()})
		}
	}
	add(d.cited, GateCited)
	add(d.traced, GateTraced)
	if len(refs) == 0 {
		return nil
	}
	return tx.InsertGateRefs(ctx, refs)
}
