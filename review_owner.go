package custody

import (
	"context"
	"slices"
)

// The owner's side of review. Design rule 8 makes the owner the one who
// puts a sensitive change in force; she must be able to see what waits
// for her (the proposal beside the value in force, who proposed it, from
// what source, which reviewer approved it) and what was held from her
// agents' sessions. Both lists answer her own user credential only: the
// proposal's body goes to the person who decides on it, never to an
// agent, so held content cannot reach a model this way (rule 4).

// PendingItem is a write waiting for its owner's confirmation.
type PendingItem struct {
	*Record
	// InForce is the version it would replace, nil when the key has none.
	InForce *Record `json:"in_force" doc:"the version in force it would replace; null when the key has none"`
	// ApprovedBy names the reviewer whose approval sent it here, when it
	// came through review.
	ApprovedBy string `json:"approved_by,omitempty" doc:"the reviewer whose approval sent it to the owner, when it came through review"`
}

// maxOwnerScan bounds the held records one page of an owner's list reads
// to find hers: a page may come back short, with a cursor to go on.
const maxOwnerScan = 10000

// ownerOnly refuses any caller but a user acting for itself.
func ownerOnly(c *Caller, what string) error {
	if !c.Principal.Has(RoleUser) || c.Subject.Name != c.Principal.Name {
		return forbidden("%s answers the owner's own user credential only; sign in with the user's token, not an agent's", what)
	}
	return nil
}

// ownRecords reads the caller's records in states, oldest first, from
// cursor, at most limit of them, reading at most maxOwnerScan records of
// the tenant; each found record goes through fn.
func (s *Service) ownRecords(ctx context.Context, tx Tx, c *Caller, states []State, cursor string, limit int, fn func(*Record) error) (string, error) {
	after, err := DecodeCursor(cursor)
	if err != nil {
		return "", err
	}
	found, scanned := 0, 0
	for {
		page := min(500, maxOwnerScan-scanned)
		recs, err := tx.InState(ctx, c.Tenant(), states, after, page)
		if err != nil {
			return "", err
		}
		for _, r := range recs {
			scanned++
			after = r.ID
			if r.Owner != c.Principal.Name {
				continue
			}
			if err := fn(r); err != nil {
				return "", err
			}
			if found++; found == limit {
				return EncodeCursor(after), nil
			}
		}
		if len(recs) < page {
			return "", nil // the end
		}
		if scanned >= maxOwnerScan {
			return EncodeCursor(after), nil
		}
	}
}

// AwaitingConfirmation lists the caller's writes waiting for her
// confirmation (pending_confirmation), oldest first, each with the value
// in force it would replace. Confirm puts one in force; Reject declines
// it.
func (s *Service) AwaitingConfirmation(ctx context.Context, c *Caller, cursor string, limit int) ([]PendingItem, string, error) {
	if err := ownerOnly(c, "the list of writes waiting for confirmation"); err != nil {
		return nil, "", err
	}
	limit, err := checkLimit(limit, DefaultListLimit, MaxListLimit)
	if err != nil {
		return nil, "", err
	}
	out := []PendingItem{}
	var next string
	err = s.store.View(ctx, func(tx Tx) error {
		next, err = s.ownRecords(ctx, tx, c, []State{StatePendingConfirmation}, cursor, limit, func(r *Record) error {
			it := PendingItem{Record: r}
			if r.Receipt != nil && slices.Contains(r.Receipt.Rules, "review-approve") {
				it.ApprovedBy = r.Receipt.Actor
			}
			if r.Key != "" {
				cur, err := tx.Current(ctx, r.Tenant, r.Owner, r.Namespace, r.Key)
				if err != nil {
					return err
				}
				if cur != nil && cur.ID != r.ID {
					it.InForce = cur
				}
			}
			out = append(out, it)
			return nil
		})
		return err
	})
	return out, next, err
}

// HeldForOwner lists the caller's records held for a reviewer
// (quarantined) or for a decision the policy could not make (pending),
// oldest first, with their receipts (which rules held them and why),
// channel, writer, source and session, and without their bodies: a
// reviewer decides on them.
func (s *Service) HeldForOwner(ctx context.Context, c *Caller, cursor string, limit int) ([]*Record, string, error) {
	if err := ownerOnly(c, "the list of held writes"); err != nil {
		return nil, "", err
	}
	limit, err := checkLimit(limit, DefaultListLimit, MaxListLimit)
	if err != nil {
		return nil, "", err
	}
	out := []*Record{}
	var next string
	err = s.store.View(ctx, func(tx Tx) error {
		next, err = s.ownRecords(ctx, tx, c, []State{StateQuarantined, StatePending}, cursor, limit, func(r *Record) error {
			r.Body, r.Withheld = "", true
			out = append(out, r)
			return nil
		})
		return err
	})
	return out, next, err
}
