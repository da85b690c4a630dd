package custody

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/custody-mem/custody/tlog"
)

// A user's own corrections and deletions. The owner of a record, with its
// own token (an agent acting for it may not), retires it (it leaves
// retrieval for good; its history keeps that it existed) or erases it (its
// body and salt go, and with them its search and trigram rows). A
// subject's erasure request, by an admin of the tenant or by the user for
// itself, erases the body of every record the subject owns, in any state.
// The log keeps the proof that each record existed and was erased (its
// entries, without the body: the commitment is salted and the salt is
// gone), verify passes, and the retired-id registry beside the server key
// marks the id erased, so that a restore of a snapshot taken before never
// brings the body back.

// ErasurePurger is a store that keeps something of an erased body beside
// its rows until it is told to purge: SQLite's FTS5 indexes keep the
// terms of a deleted document until a merge, and its WAL the pages as
// they were; PostgreSQL keeps a rewritten row's old version until a
// vacuum. The service calls it after every erasure that committed, before
// it answers.
type ErasurePurger interface {
	PurgeErased(ctx context.Context) error
}

// purgeErased tells the store to purge after an erasure. The erasure has
// committed: a failure is logged with what to do (the store's error says
// it), and the erasure stands.
func (s *Service) purgeErased(ctx context.Context) {
	if p, ok := s.store.(ErasurePurger); ok {
		if err := p.PurgeErased(ctx); err != nil {
			slog.Warn("custody: an erasure committed, but the store still holds old copies of the erased bodies beside its rows (see Erasure in docs/operations.md; custody reindex purges SQLite's indexes)", "err", err)
		}
	}
}

// ObservationSourceOf is the source of an observation whose text is a
// copy of record id's body (what a read put in the model's context).
func ObservationSourceOf(id string) string { return "memory:" + id }

// TransitionErasure is the transition of the entry that closes a subject's
// erasure request: the subject, how many records it erased and who asked.
const TransitionErasure = "erasure"

// Forget retires (erase false) or erases a record that the caller's own
// user owns. It returns the affected ids, the record first, then the
// descendants the cascade suspended.
func (s *Service) Forget(ctx context.Context, c *Caller, id, reason string, erase bool) ([]string, error) {
	if c.Principal.ID() != c.Subject.ID() {
		return nil, forbidden("principal %s may not delete the memories of %s: the owner does, with its own token", c.Principal.ID(), c.Subject.ID())
	}
	if err := validReason(reason); err != nil {
		return nil, err
	}
	var affected []string
	err := s.update(ctx, func(tx Tx) error {
		r, err := tx.Record(ctx, c.Tenant(), id)
		if err != nil || r.Owner != c.Subject.Name {
			return notFound("memory")
		}
		if erase {
			affected, err = s.eraseRecord(ctx, tx, c.Principal, r, orDefault(reason, "erased by its owner"))
			return err
		}
		if r.State.Terminal() {
			return conflict("record %s is already %s; erase it with erase=true to remove its body too", id, r.State)
		}
		rc := &Receipt{Decision: StateRetired, PolicyVersion: r.PolicyVersion, Rules: []string{"retire"}, Reason: orDefault(reason, "retired by its owner")}
		if err := s.transition(ctx, tx, c.Principal, r, "retire", StateRetired, rc); err != nil {
			return err
		}
		if err := tx.UpdateRecord(ctx, r); err != nil {
			return err
		}
		more, err := s.suspendDescendants(ctx, tx, c.Principal, r)
		affected = append([]string{r.ID}, more...)
		return err
	})
	if err == nil && erase {
		s.purgeErased(ctx)
	}
	return affected, err
}

// eraseRecord erases r's body and salt in tx: a record not yet retired or
// rejected is retired with it, and its descendants are suspended. An
// erased record is a conflict.
func (s *Service) eraseRecord(ctx context.Context, tx Tx, actor *Principal, r *Record, reason string) ([]string, error) {
	if r.Erased {
		return nil, conflict("record %s is erased already", r.ID)
	}
	next := r.State
	if !next.Terminal() {
		next = StateRetired
	}
	r.Body, r.Salt, r.Metadata, r.Erased = "", nil, nil, true
	rc := &Receipt{Decision: next, PolicyVersion: r.PolicyVersion, Rules: []string{"erase"}, Reason: reason}
	if err := s.transition(ctx, tx, actor, r, "erase", next, rc); err != nil {
		return nil, err
	}
	if err := tx.UpdateRecord(ctx, r); err != nil {
		return nil, err
	}
	// A read that showed the body to a model (an MCP search or get of an
	// external memory) copied it into an observation of its session:
	// that copy goes too, before the cascade notes its sessions.
	if err := tx.EraseObservations(ctx, r.Tenant, ObservationSourceOf(r.ID)); err != nil {
		return nil, err
	}
	more, err := s.suspendDescendants(ctx, tx, actor, r)
	return append([]string{r.ID}, more...), err
}

// ErasedRecord is one record a subject's erasure erased.
type ErasedRecord struct {
	ID        string `json:"id"`
	Namespace string `json:"namespace"`
	Key       string `json:"key,omitempty"`
	Class     Class  `json:"class"`
	State     State  `json:"state" doc:"its state after the erasure: retired, or rejected if it was"`
	LogIndex  uint64 `json:"log_index"`
}

// ErasureReceipt answers a subject's erasure request.
type ErasureReceipt struct {
	Tenant  string         `json:"tenant"`
	Subject string         `json:"subject"`
	By      string         `json:"by"`
	Erased  []ErasedRecord `json:"erased"`
	// AlreadyErased counts the subject's records erased before.
	AlreadyErased int `json:"already_erased"`
	// Suspended lists the descendants (of other owners too) that the
	// erasure suspended.
	Suspended []string `json:"suspended"`
	LogIndex  uint64   `json:"log_index" doc:"the entry that closes the request"`
}

// EraseSubject erases the body of every record the subject owns. An admin
// of the tenant may ask it for anyone; a user for itself.
func (s *Service) EraseSubject(ctx context.Context, c *Caller, subject, reason string) (*ErasureReceipt, error) {
	self := c.Principal.ID() == c.Subject.ID() && c.Principal.Name == subject
	if !self && !c.Principal.Has(RoleAdmin) {
		return nil, forbidden("principal %s may not erase the memories of %q: an admin may, or the user itself", c.Principal.ID(), subject)
	}
	if err := ValidName("subject", subject); err != nil {
		return nil, err
	}
	if err := validReason(reason); err != nil {
		return nil, err
	}
	rep := &ErasureReceipt{Tenant: c.Tenant(), Subject: subject, By: c.Principal.ID(), Erased: []ErasedRecord{}, Suspended: []string{}}
	reason = orDefault(reason, "erasure request of "+subject+" by "+c.Principal.ID())
	err := s.update(ctx, func(tx Tx) error {
		if _, err := tx.Principal(ctx, c.Tenant(), subject); err != nil {
			return notFound("subject")
		}
		var todo []*Record
		err := tx.ScanRecords(ctx, c.Tenant(), func(r *Record) error {
			switch {
			case r.Owner != subject:
			case r.Erased:
				rep.AlreadyErased++
			default:
				todo = append(todo, r)
			}
			return nil
		})
		if err != nil {
			return err
		}
		own := map[string]bool{}
		for _, r := range todo {
			own[r.ID] = true
		}
		for _, r := range todo {
			cur, err := tx.Record(ctx, r.Tenant, r.ID) // a cascade of an earlier one may have moved it
			if err != nil {
				return err
			}
			affected, err := s.eraseRecord(ctx, tx, c.Principal, cur, reason)
			if err != nil {
				return err
			}
			rep.Erased = append(rep.Erased, ErasedRecord{ID: cur.ID, Namespace: cur.Namespace, Key: cur.Key, Class: cur.Class, State: cur.State, LogIndex: cur.LogIndex})
			for _, id := range affected[1:] {
				if !own[id] {
					rep.Suspended = append(rep.Suspended, id)
				}
			}
		}
		rep.LogIndex, err = s.appendAs(ctx, tx, c.Principal, &tlog.Entry{Tenant: c.Tenant(), Transition: TransitionErasure,
			Details: map[string]string{"subject": subject, "erased": strconv.Itoa(len(rep.Erased)), "already_erased": strconv.Itoa(rep.AlreadyErased), "by": c.Principal.ID()}})
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(rep.Erased) > 0 {
		s.purgeErased(ctx)
	}
	return rep, nil
}

// erasureSummary names an erasure for messages.
func (r *ErasureReceipt) String() string {
	return fmt.Sprintf("erased %d records of %s/%s (%d erased before)", len(r.Erased), r.Tenant, r.Subject, r.AlreadyErased)
}
