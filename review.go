package custody

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// ReviewItem is a quarantined candidate with its proposed effect.
type ReviewItem struct {
	*Record
	Proposed *Proposed `json:"proposed,omitempty"`
	// ExpiresReviewAt is when the sweep rejects the candidate unreviewed
	// (its creation plus Options.ReviewTTL).
	ExpiresReviewAt time.Time `json:"expires_review_at"`
	// ApprovalNeeds is set when approving it needs a role beyond the
	// reviewer's (review_roles.go): a procedure needs policy_owner or admin.
	ApprovalNeeds *ApprovalNeed `json:"approval_needs,omitempty" doc:"set when approving it needs a role beyond reviewer (a procedure: policy_owner or admin)"`
	// Dependents are the records derived from it, at any depth, with
	// their states (at most MaxDependents): what its decision reaches.
	Dependents []Dependent `json:"dependents,omitempty" doc:"records derived from it, at any depth, with their states"`
	// Sensitive says its key matches a sensitive pattern: approving an
	// overwrite of it leaves it waiting for its owner (rule 8).
	Sensitive bool `json:"sensitive,omitempty" doc:"its key is sensitive: an approved overwrite waits for the owner's confirmation"`
}

// Dependent is a record derived from another, with its state.
type Dependent struct {
	ID    string `json:"id"`
	State State  `json:"state"`
}

// MaxDependents bounds the dependents listed with a review item.
const MaxDependents = 100

// dependents lists the records derived from r, at most MaxDependents.
func dependents(ctx context.Context, tx Tx, r *Record) ([]Dependent, error) {
	ds, err := tx.Descendants(ctx, r.Tenant, r.ID)
	if err != nil {
		return nil, err
	}
	var out []Dependent
	for _, d := range ds[:min(len(ds), MaxDependents)] {
		out = append(out, Dependent{ID: d.ID, State: d.State})
	}
	return out, nil
}

// Proposed is what approving a keyed candidate would change.
type Proposed struct {
	Old *string `json:"old"`
	New string  `json:"new"`
}

// ReviewQueue lists quarantined candidates of the caller's tenant, oldest
// first, with source, channel, writer, audience and (for keyed records) the
// value they would replace. Reviewers, admins and policy owners (who
// approve what admission reserves for them: procedures) only.
func (s *Service) ReviewQueue(ctx context.Context, c *Caller, cursor string, limit int) ([]ReviewItem, string, error) {
	if !c.Principal.HasAny(RoleReviewer, RoleAdmin, RolePolicyOwner) {
		return nil, "", forbidden("the review queue needs the reviewer, policy_owner or admin role")
	}
	limit, err := checkLimit(limit, DefaultListLimit, MaxListLimit)
	if err != nil {
		return nil, "", err
	}
	after, err := DecodeCursor(cursor)
	if err != nil {
		return nil, "", err
	}
	items := []ReviewItem{}
	next := ""
	err = s.store.View(ctx, func(tx Tx) error {
		recs, err := tx.InState(ctx, c.Tenant(), []State{StateQuarantined}, after, limit+1)
		if err != nil {
			return err
		}
		if len(recs) > limit {
			recs = recs[:limit]
			next = EncodeCursor(recs[limit-1].ID)
		}
		pol, polErr := s.policyFor(ctx, tx, c.Tenant())
		for _, r := range recs {
			it := ReviewItem{Record: r, ExpiresReviewAt: r.CreatedAt.Add(s.opts.ReviewTTL), Sensitive: r.Key != "" && s.Sensitive(r.Key)}
			if it.ApprovalNeeds, err = s.approvalNeedUnder(ctx, tx, pol, polErr, r); err != nil {
				return err
			}
			if it.Dependents, err = dependents(ctx, tx, r); err != nil {
				return err
			}
			if r.Key != "" {
				it.Proposed = &Proposed{New: r.Body}
				cur, err := tx.Current(ctx, r.Tenant, r.Owner, r.Namespace, r.Key)
				if err != nil {
					return err
				}
				if cur != nil {
					it.Proposed.Old = &cur.Body
				}
			}
			items = append(items, it)
		}
		return nil
	})
	return items, next, err
}

// Approve admits a quarantined candidate with authority confirmed; the
// receipt names the reviewer. A candidate whose parent is out stays out. An
// overwrite of a sensitive key becomes pending_confirmation instead: only
// its owner's Confirm puts it in force.
func (s *Service) Approve(ctx context.Context, c *Caller, id string) (*Record, error) {
	return s.ApproveBecause(ctx, c, id, "")
}

// ApproveBecause is Approve with the reviewer's reason, kept in the
// receipt (and so in the log) after the words that name the reviewer.
func (s *Service) ApproveBecause(ctx context.Context, c *Caller, id, reason string) (*Record, error) {
	if err := validReason(reason); err != nil {
		return nil, err
	}
	because := ""
	if reason = strings.TrimSpace(reason); reason != "" {
		because = ": " + reason
	}
	if !c.Principal.HasAny(RoleReviewer, RoleAdmin, RolePolicyOwner) {
		return nil, forbidden("approving needs the reviewer or admin role")
	}
	return s.decideByHand(ctx, c, id, []State{StateQuarantined}, func(tx Tx, r *Record) (State, *Receipt, error) {
		pol, polErr := s.policyFor(ctx, tx, r.Tenant)
		need, err := s.approvalNeedUnder(ctx, tx, pol, polErr, r)
		if err != nil {
			return "", nil, err
		}
		if !need.allows(c.Principal) {
			return "", nil, need.refusal(c.Principal, r)
		}
		if need == nil && !c.Principal.HasAny(RoleReviewer, RoleAdmin) {
			return "", nil, forbidden("approving needs the reviewer or admin role; a policy_owner approves only what admission reserves for its role (a procedure)")
		}
		for _, e := range r.Parents {
			p, err := tx.Record(ctx, r.Tenant, e.ID)
			if err != nil {
				return "", nil, err
			}
			if p.State != StateAdmitted {
				return "", nil, conflict("parent %s is %s; approve or rebuild it first", p.ID, p.State)
			}
		}
		over, err := s.sensitiveOverwrite(ctx, tx, r)
		if err != nil {
			return "", nil, err
		}
		if over {
			return StatePendingConfirmation, &Receipt{Decision: StatePendingConfirmation, PolicyVersion: r.PolicyVersion,
				Rules:  []string{"review-approve", "sensitive-overwrite"},
				Reason: fmt.Sprintf("approved by reviewer %s%s; overwriting sensitive key %q still waits for its owner's confirmation, and the value in force stays meanwhile", c.Principal.ID(), because, r.Key)}, nil
		}
		r.Authority = AuthorityConfirmed
		return StateAdmitted, &Receipt{Decision: StateAdmitted, PolicyVersion: r.PolicyVersion, Rules: []string{"review-approve"},
			Reason: "approved by reviewer " + c.Principal.ID() + because}, nil
	}, "approve")
}

// sensitiveOverwrite reports whether admitting r would replace the value in
// force of a sensitive key (design rule 8) — an older version approved
// again replaces nothing. A reviewer's approval is not the
// owner's confirmation, so such a record waits in pending_confirmation, at
// the authority it had, until its owner confirms it.
func (s *Service) sensitiveOverwrite(ctx context.Context, tx Tx, r *Record) (bool, error) {
	if r.Key == "" || !s.Sensitive(r.Key) {
		return false, nil
	}
	cur, err := tx.Current(ctx, r.Tenant, r.Owner, r.Namespace, r.Key)
	return err == nil && cur != nil && cur.ID != r.ID && cur.Version < r.Version, err
}

// Reject rejects a quarantined or pending candidate (reviewer or admin), or
// lets the owner decline a write waiting for confirmation.
func (s *Service) Reject(ctx context.Context, c *Caller, id, reason string) (*Record, error) {
	if err := validReason(reason); err != nil {
		return nil, err
	}
	states := []State{StateQuarantined, StatePending, StatePendingConfirmation}
	if !c.Principal.HasAny(RoleReviewer, RoleAdmin) {
		if !c.Principal.Has(RoleUser) {
			return nil, forbidden("rejecting needs the reviewer or admin role")
		}
		states = []State{StatePendingConfirmation}
	}
	return s.decideByHand(ctx, c, id, states, func(tx Tx, r *Record) (State, *Receipt, error) {
		if !c.Principal.HasAny(RoleReviewer, RoleAdmin) && r.Owner != c.Principal.Name {
			return "", nil, notFound("record")
		}
		return StateRejected, &Receipt{Decision: StateRejected, PolicyVersion: r.PolicyVersion, Rules: []string{"review-reject"},
			Reason: orDefault(reason, "rejected by "+c.Principal.ID())}, nil
	}, "reject")
}

// Confirm is the owner's confirmation of a write waiting in
// pending_confirmation: it becomes admitted with authority confirmed and
// replaces the value in force. Only the owner's own user credential can
// confirm; an agent acting for the owner cannot.
func (s *Service) Confirm(ctx context.Context, c *Caller, id string) (*Record, error) {
	return s.ConfirmBecause(ctx, c, id, "")
}

// ConfirmBecause is Confirm with the owner's reason, kept in the receipt
// (and so in the log) after the words that name her.
func (s *Service) ConfirmBecause(ctx context.Context, c *Caller, id, reason string) (*Record, error) {
	if err := validReason(reason); err != nil {
		return nil, err
	}
	because := ""
	if reason = strings.TrimSpace(reason); reason != "" {
		because = ": " + reason
	}
	return s.decideByHand(ctx, c, id, []State{StatePendingConfirmation}, func(tx Tx, r *Record) (State, *Receipt, error) {
		if !c.Principal.Has(RoleUser) || r.Owner != c.Principal.Name {
			return "", nil, notFound("record")
		}
		r.Authority = AuthorityConfirmed
		return StateAdmitted, &Receipt{Decision: StateAdmitted, PolicyVersion: r.PolicyVersion, Rules: []string{"owner-confirm"},
			Reason: "confirmed by its owner " + c.Principal.ID() + because}, nil
	}, "confirm")
}

// decideByHand applies a human decision to a record in one of states.
func (s *Service) decideByHand(ctx context.Context, c *Caller, id string, states []State,
	decide func(Tx, *Record) (State, *Receipt, error), name string) (*Record, error) {
	var out *Record
	err := s.update(ctx, func(tx Tx) error {
		r, err := tx.Record(ctx, c.Tenant(), id)
		if err != nil {
			return notFound("record")
		}
		// A policy owner approves what is reserved for its role
		// (review_roles.go); Approve checks the rest.
		if !s.mayInspect(c, r) && !(name == "approve" && c.Principal.Has(RolePolicyOwner)) {
			return notFound("record")
		}
		ok := false
		for _, st := range states {
			ok = ok || r.State == st
		}
		if !ok {
			return conflict("record %s is %s; %s applies to %s", id, r.State, name, joinStates(states))
		}
		next, rc, err := decide(tx, r)
		if err != nil {
			return err
		}
		if err := s.transition(ctx, tx, c.Principal, r, name, next, rc); err != nil {
			return err
		}
		out = r
		return tx.UpdateRecord(ctx, r)
	})
	return out, err
}

func joinStates(ss []State) string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = string(s)
	}
	return strings.Join(out, " or ")
}

// Reevaluate decides the tenant's pending candidates again under the current
// policy, never raising their authority. It returns the ids that left
// pending.
func (s *Service) Reevaluate(ctx context.Context, c *Caller) ([]string, error) {
	if !c.Principal.HasAny(RolePolicyOwner, RoleReviewer, RoleAdmin) {
		return nil, forbidden("re-evaluation needs the policy_owner, reviewer or admin role")
	}
	var changed []string
	err := s.update(ctx, func(tx Tx) error {
		var err error
		changed, err = s.reevaluate(ctx, tx, c.Principal)
		return err
	})
	return changed, err
}

// reevaluate decides actor's tenant's pending candidates again inside tx.
func (s *Service) reevaluate(ctx context.Context, tx Tx, actor *Principal) ([]string, error) {
	changed := []string{}
	recs, err := tx.InState(ctx, actor.Tenant, []State{StatePending}, "", 1<<20)
	if err != nil {
		return nil, err
	}
	for _, r := range recs {
		tenant, name, _ := strings.Cut(r.Writer, "/")
		writer, err := tx.Principal(ctx, tenant, name)
		writer, err = s.verifiedPrincipal(ctx, writer, err)
		if errors.Is(err, ErrPrincipalUnverified) {
			continue // rights that disagree with the log decide nothing: it stays pending
		}
		if err != nil {
			return nil, fmt.Errorf("writer of %s: %w", r.ID, err)
		}
		owner, err := tx.Principal(ctx, r.Tenant, r.Owner)
		owner, err = s.verifiedPrincipal(ctx, owner, err)
		if errors.Is(err, ErrPrincipalUnverified) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("owner of %s: %w", r.ID, err)
		}
		if err := s.readmit(ctx, tx, actor, &Caller{Principal: writer, Subject: owner}, r, "reevaluate", r.Authority); err != nil {
			return nil, err
		}
		if r.State != StatePending {
			changed = append(changed, r.ID)
		}
	}
	return changed, nil
}

// Sweep rejects quarantined candidates that waited longer than the review
// time, across all tenants, as the server. It returns the ids rejected.
func (s *Service) Sweep(ctx context.Context) ([]string, error) {
	cutoff := s.now().Add(-s.opts.ReviewTTL)
	var out []string
	err := s.update(ctx, func(tx Tx) error {
		recs, err := tx.InState(ctx, "", []State{StateQuarantined}, "", 10000)
		if err != nil {
			return err
		}
		for _, r := range recs {
			if r.CreatedAt.After(cutoff) {
				continue
			}
			rc := &Receipt{Decision: StateRejected, PolicyVersion: r.PolicyVersion, Rules: []string{"review-expired"},
				Reason: fmt.Sprintf("unreviewed for %s", s.opts.ReviewTTL)}
			if err := s.transition(ctx, tx, nil, r, "expire", StateRejected, rc); err != nil {
				return err
			}
			if err := tx.UpdateRecord(ctx, r); err != nil {
				return err
			}
			out = append(out, r.ID)
		}
		return nil
	})
	if errors.Is(err, ErrNotFound) {
		err = nil
	}
	return out, err
}
