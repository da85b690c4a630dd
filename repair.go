package custody

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/custody-mem/custody/tlog"
)

// suspendBatch bounds the ids of one cascade log entry.
const suspendBatch = 1000

// Quarantine withdraws a record for review and suspends every descendant.
// It returns the affected ids (the record first).
func (s *Service) Quarantine(ctx context.Context, c *Caller, id, reason string) ([]string, error) {
	return s.withdraw(ctx, c, id, StateQuarantined, "quarantine", reason, false)
}

// Retire withdraws a record for good and suspends every descendant. With
// erase, the body, its salt and its search entry are removed; the log keeps
// only the body's salted hash, so verify still passes and nothing can check
// a guess of the body against it any more.
func (s *Service) Retire(ctx context.Context, c *Caller, id, reason string, erase bool) ([]string, error) {
	ids, err := s.withdraw(ctx, c, id, StateRetired, "retire", reason, erase)
	if err == nil && erase {
		s.purgeErased(ctx)
	}
	return ids, err
}

func (s *Service) repairer(c *Caller) error {
	if !c.Principal.HasAny(RoleReviewer, RoleAdmin) {
		return forbidden("repair operations need the reviewer or admin role")
	}
	return nil
}

func (s *Service) withdraw(ctx context.Context, c *Caller, id string, next State, name, reason string, erase bool) ([]string, error) {
	if err := s.repairer(c); err != nil {
		return nil, err
	}
	if err := validReason(reason); err != nil {
		return nil, err
	}
	var affected []string
	err := s.update(ctx, func(tx Tx) error {
		r, err := tx.Record(ctx, c.Tenant(), id)
		if err != nil {
			return err
		}
		if r.State.Terminal() || (r.State == next && !erase) {
			return conflict("record %s is already %s", id, r.State)
		}
		if next == StateQuarantined && r.State != StateAdmitted && r.State != StatePendingConfirmation && r.State != StatePending {
			return conflict("record %s is %s; only admitted or pending records can be quarantined (retire it instead)", id, r.State)
		}
		if erase {
			r.Body, r.Salt, r.Metadata, r.Erased = "", nil, nil, true // the salt goes with the body
		}
		rc := &Receipt{Decision: next, PolicyVersion: r.PolicyVersion, Rules: []string{name}, Reason: orDefault(reason, name+" by "+c.Principal.ID())}
		if next == r.State { // erasing a record that is already retired
			name = "erase"
		}
		if err := s.transition(ctx, tx, c.Principal, r, name, next, rc); err != nil {
			return err
		}
		if err := tx.UpdateRecord(ctx, r); err != nil {
			return err
		}
		affected = append(affected, r.ID)
		more, err := s.suspendDescendants(ctx, tx, c.Principal, r)
		affected = append(affected, more...)
		return err
	})
	return affected, err
}

// suspendDescendants suspends, transitively, every descendant of root that
// is not already out, with one log entry per batch of ids, and lowers the
// floor of the sessions that retrieved root or one of them.
func (s *Service) suspendDescendants(ctx context.Context, tx Tx, actor *Principal, root *Record) ([]string, error) {
	desc, err := tx.Descendants(ctx, root.Tenant, root.ID)
	if err != nil {
		return nil, err
	}
	var todo []IDState
	var out []string
	for _, d := range desc {
		if !d.State.Terminal() && d.State != StateSuspended {
			todo = append(todo, d)
			out = append(out, d.ID)
		}
	}
	for start := 0; start < len(out); start += suspendBatch {
		end := min(start+suspendBatch, len(out))
		ids := out[start:end]
		idx, err := s.appendAs(ctx, tx, actor, &tlog.Entry{
			Tenant: root.Tenant, Transition: "suspend", RecordIDs: ids, NewState: string(StateSuspended),
			Details: map[string]string{"cause": root.ID},
		})
		if err != nil {
			return nil, err
		}
		rc := &Receipt{Decision: StateSuspended, Rules: []string{"cascade"},
			Reason: fmt.Sprintf("ancestor %s is %s", root.ID, root.State), Actor: actor.ID(), Time: s.now(), LogIndex: idx}
		if err := tx.SetStates(ctx, root.Tenant, todo[start:end], StateSuspended, idx, rc); err != nil {
			return nil, err
		}
	}
	return out, s.lowerReaders(ctx, tx, actor, root, append([]string{root.ID}, out...)) // session_reads.go
}

// Rebuild re-admits a suspended derived record from its parents once they
// are eligible again, then does the same for its suspended descendants. A
// strong parent that is still out refuses the rebuild; a weak one is dropped
// from the edges. With a new body, a new version is written from the
// surviving parents instead and the old record stays suspended. It returns
// the affected ids.
func (s *Service) Rebuild(ctx context.Context, c *Caller, id, body string) ([]string, error) {
	if err := s.repairer(c); err != nil {
		return nil, err
	}
	var affected []string
	err := s.update(ctx, func(tx Tx) error {
		r, err := tx.Record(ctx, c.Tenant(), id)
		if err != nil {
			return err
		}
		if r.State != StateSuspended {
			return conflict("record %s is %s; only suspended records are rebuilt", id, r.State)
		}
		if affected, err = s.rebuildOne(ctx, tx, c, r, body, true); err != nil {
			return err
		}
		if body != "" || len(affected) == 0 || r.State != StateAdmitted {
			return nil
		}
		// Descendants whose parents are all eligible now follow.
		queue := []string{r.ID}
		for len(queue) > 0 {
			kids, err := tx.Children(ctx, r.Tenant, queue[0])
			queue = queue[1:]
			if err != nil {
				return err
			}
			for _, k := range kids {
				kr, err := tx.Record(ctx, r.Tenant, k)
				if err != nil {
					return err
				}
				if kr.State != StateSuspended || slices.Contains(affected, k) {
					continue
				}
				ids, err := s.rebuildOne(ctx, tx, c, kr, "", false)
				if err != nil {
					return err
				}
				affected = append(affected, ids...)
				if kr.State == StateAdmitted {
					queue = append(queue, k)
				}
			}
		}
		return nil
	})
	return affected, err
}

// rebuildOne re-decides one suspended record. When strict, a strong parent
// still out is a conflict; otherwise the record is left as it is.
func (s *Service) rebuildOne(ctx context.Context, tx Tx, c *Caller, r *Record, body string, strict bool) ([]string, error) {
	owner, err := tx.Principal(ctx, r.Tenant, r.Owner)
	if owner, err = s.verifiedPrincipal(ctx, owner, err); err != nil {
		return nil, err
	}
	writer := c.Principal
	var kept []Edge
	for _, e := range r.Parents {
		p, err := tx.Record(ctx, r.Tenant, e.ID)
		if err != nil {
			return nil, err
		}
		if p.State == StateAdmitted {
			kept = append(kept, e)
			continue
		}
		if e.Weight >= s.opts.StrongEdge {
			if strict {
				return nil, conflict("parent %s of %s is still %s; approve or rebuild it first", p.ID, r.ID, p.State)
			}
			return nil, nil
		}
	}
	if len(r.Parents) > 0 && len(kept) == 0 {
		if strict {
			return nil, conflict("record %s has no eligible parent left to rebuild from", r.ID)
		}
		return nil, nil
	}
	rc := &Caller{Principal: writer, Subject: owner}
	if body != "" {
		n := &Record{ID: s.newID(), Tenant: r.Tenant, Owner: r.Owner, Namespace: r.Namespace, Key: r.Key, Class: r.Class,
			Body: body, Channel: r.Channel, Writer: writer.ID(), SourceRef: r.SourceRef, Audience: r.Audience,
			CreatedAt: s.now(), ExpiresAt: r.ExpiresAt, Session: r.Session, Parents: kept, Metadata: maps.Clone(r.Metadata)}
		if err := s.admitNew(ctx, tx, rc, n, nil); err != nil {
			return nil, err
		}
		return []string{n.ID}, nil
	}
	r.Parents = kept
	if err := s.readmit(ctx, tx, writer, rc, r, "rebuild", 0); err != nil {
		return nil, err
	}
	return []string{r.ID}, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
