package custody

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/custody-mem/custody/tlog"
)

// A person's decisions, read back from the tenant's log: every approval,
// rejection, confirmation, repair and confirmed action is an entry signed
// by the key of the principal who made it (rule 13), so the log is the
// list of one's own decisions, each with the index that proves it. And the
// versions of a key a reviewer weighs: the value in force beside the
// proposals, marked.

// The transitions a person makes by hand.
var handTransitions = []string{"approve", "reject", "confirm", "quarantine", "retire", "rebuild", "confirm_action"}

// MaxDecisionScan bounds the log entries one page of Decisions reads.
const MaxDecisionScan = 20000

// DecisionEntry is one decision of the caller, as its log entry says.
type DecisionEntry struct {
	LogIndex   uint64    `json:"log_index"`
	Transition string    `json:"transition" doc:"approve, reject, confirm, quarantine, retire, rebuild or confirm_action"`
	RecordID   string    `json:"record_id,omitempty"`
	PrevState  string    `json:"prev_state,omitempty"`
	NewState   string    `json:"new_state,omitempty"`
	Reason     string    `json:"reason,omitempty"`
	Rules      []string  `json:"rules,omitempty"`
	Action     string    `json:"action,omitempty" doc:"the action confirmed (confirm_action)"`
	Time       time.Time `json:"time"`
	// Record is the record decided, as it is now; its body only where the
	// decision was on it as a proposal (approve, reject, confirm: the
	// decider read it to decide) and it was not erased since.
	Record *Record `json:"record,omitempty"`
}

// Decisions lists the caller's own decisions, newest first, from the log
// entries before index before (0: the whole log), reading at most
// MaxDecisionScan entries. next is where the next page starts (0: the
// beginning of the log was reached).
func (s *Service) Decisions(ctx context.Context, c *Caller, before uint64, limit int) (out []DecisionEntry, next uint64, err error) {
	limit, err = checkLimit(limit, DefaultListLimit, MaxListLimit)
	if err != nil {
		return nil, 0, err
	}
	size, err := s.store.LogSize(ctx, c.Tenant())
	if err != nil {
		return nil, 0, err
	}
	end := size
	if before > 0 && before < size {
		end = before
	}
	me := c.Principal.ID()
	out = []DecisionEntry{}
	for scanned := uint64(0); end > 0 && scanned < MaxDecisionScan && len(out) < limit; {
		start := end - min(end, MaxLogEntries)
		leaves, err := s.store.Leaves(ctx, c.Tenant(), start, end)
		if err != nil {
			return nil, 0, err
		}
		for i := len(leaves) - 1; i >= 0 && len(out) < limit; i-- {
			l := leaves[i]
			end = l.Index
			scanned++
			if l.Tenant != c.Tenant() {
				continue
			}
			e, err := tlog.ParseLeaf(l.Data)
			if err != nil {
				return nil, 0, fmt.Errorf("log entry %d: %w", l.Index, err)
			}
			if e.Actor != me || !slices.Contains(handTransitions, e.Transition) {
				continue
			}
			d := DecisionEntry{LogIndex: l.Index, Transition: e.Transition, RecordID: e.RecordID, PrevState: e.PrevState, NewState: e.NewState,
				Reason: e.Details["reason"], Action: e.Details["action"], Time: e.Time}
			if rs := e.Details["rules"]; rs != "" {
				d.Rules = strings.Split(rs, ",")
			}
			out = append(out, d)
		}
		if len(leaves) == 0 {
			end = start
		}
	}
	err = s.store.View(ctx, func(tx Tx) error {
		for i := range out {
			d := &out[i]
			if d.RecordID == "" {
				continue
			}
			r, err := tx.Record(ctx, c.Tenant(), d.RecordID)
			if err != nil {
				continue // gone (erased rows keep no record); the entry still says what was decided
			}
			if r.Erased || !slices.Contains([]string{"approve", "reject", "confirm"}, d.Transition) {
				r.Body, r.Withheld = "", true
			}
			d.Record = r
		}
		return nil
	})
	return out, end, err
}

// KeyVersion is a version of a key with whether it is the one in force.
type KeyVersion struct {
	*Record
	InForce bool `json:"in_force" doc:"this version is the key's value in force"`
}

// ReviewVersions lists the versions of the key of record id, oldest first,
// with the one in force marked, for a reviewer, a policy owner or an
// admin. While a version of the key waits for a decision (quarantined,
// pending or pending_confirmation) every version carries its body: the
// reviewer weighs the proposal against what it would replace. Otherwise a
// version carries its body where the caller may read it (mayRead).
func (s *Service) ReviewVersions(ctx context.Context, c *Caller, id string) ([]KeyVersion, error) {
	if !c.Principal.HasAny(RoleReviewer, RoleAdmin, RolePolicyOwner) {
		return nil, notFound("record")
	}
	var out []KeyVersion
	err := s.store.View(ctx, func(tx Tx) error {
		r, err := tx.Record(ctx, c.Tenant(), id)
		if err != nil {
			return notFound("record")
		}
		vs := []*Record{r}
		current := ""
		if r.Key != "" {
			if vs, err = tx.Versions(ctx, r.Tenant, r.Owner, r.Namespace, r.Key); err != nil {
				return err
			}
			if current, err = tx.CurrentID(ctx, r.Tenant, r.Owner, r.Namespace, r.Key); err != nil {
				return err
			}
		} else if r.Eligible(r.Owner, nil, s.now()) {
			current = r.ID
		}
		waiting := slices.ContainsFunc(vs, func(v *Record) bool {
			return v.State == StateQuarantined || v.State == StatePending || v.State == StatePendingConfirmation
		})
		now := s.now()
		for _, v := range vs {
			if v.Erased || !(waiting || s.mayRead(c, v, now)) {
				v.Body, v.Withheld = "", true
			}
			out = append(out, KeyVersion{Record: v, InForce: v.ID == current})
		}
		return nil
	})
	return out, err
}
