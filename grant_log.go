package custody

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/custody-mem/custody/tlog"
)

// An owner's confirmation of an exact action (ConfirmAction) is a row of
// the grants table and a confirm_action entry naming the subject and the
// action's digest, signed by the owner. The gate spends it on the next
// identical call that would have answered confirm: the row is marked used
// and the gate entry, an allow, ends its reasons with
// ReasonConfirmationUsed. The gate decides on the table alone, so the
// table must say what the log says: verify counts, for each tenant,
// subject and digest, the confirmations the log records (by who made
// them) and the ones its gate decisions spent, and compares them with the
// rows and their used marks. A row added outside custody (a confirmation
// the owner never gave) and a spent row made unused again (a confirmation
// used twice) are differences, and so are rows deleted or marked used
// without a gate decision.

// TransitionConfirmAction is the transition of an owner's confirmation of
// an exact action.
const TransitionConfirmAction = "confirm_action"

// ReasonConfirmationUsed is the last reason of a gate decision that spent
// an owner's confirmation: verify counts the allows that end with it.
const ReasonConfirmationUsed = "the owner confirmed this exact action; the confirmation is now used"

// StoredGrant is a grants row as stored: the confirmation and when the
// gate spent it (nil: not yet).
type StoredGrant struct {
	Grant
	UsedAt *time.Time
}

// grantKey names the confirmations of one action: tenant, subject and
// the action's digest.
type grantKey struct{ tenant, subject, digest string }

// grantCount is what the log, or the table, holds for one grantKey: the
// confirmations by each actor, and how many were spent.
type grantCount struct {
	by   map[string]int
	used int
}

// grantLog counts the confirmations and their uses, by grantKey.
type grantLog map[grantKey]*grantCount

func (g grantLog) at(k grantKey) *grantCount {
	c := g[k]
	if c == nil {
		c = &grantCount{by: map[string]int{}}
		g[k] = c
	}
	return c
}

// add takes note of a confirm_action entry, or of a gate entry that spent
// a confirmation.
func (g grantLog) add(e *tlog.Entry) {
	k := grantKey{e.Tenant, e.Details["subject"], e.Details["args_sha256"]}
	switch {
	case e.Transition == TransitionConfirmAction:
		g.at(k).by[e.Actor]++
	case e.Transition == "gate" && spentConfirmation(e):
		g.at(k).used++
	}
}

// spentConfirmation reports whether gate entry e spent a confirmation: the
// gate appends ReasonConfirmationUsed last, and only to an allow. Nothing
// a caller sends can end an allow's reasons with it (an allow's reasons
// without a confirmation end with the action's risk).
func spentConfirmation(e *tlog.Entry) bool {
	r := e.Details["reasons"]
	return e.NewState == GateAllow && (r == ReasonConfirmationUsed || strings.HasSuffix(r, "; "+ReasonConfirmationUsed))
}

// compareGrants checks the grants table against the confirmations and
// uses the log records.
func compareGrants(ctx context.Context, tx Tx, logged grantLog) error {
	stored := grantLog{}
	err := tx.ScanGrants(ctx, func(sg *StoredGrant) error {
		c := stored.at(grantKey{sg.Tenant, sg.Subject, sg.Digest})
		c.by[sg.Actor]++
		if sg.UsedAt != nil {
			c.used++
		}
		return nil
	})
	if err != nil {
		return err
	}
	keys := make([]grantKey, 0, len(stored)+len(logged))
	for k := range stored {
		keys = append(keys, k)
	}
	for k := range logged {
		if stored[k] == nil {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b grantKey) int {
		return strings.Compare(a.tenant+"\x00"+a.subject+"\x00"+a.digest, b.tenant+"\x00"+b.subject+"\x00"+b.digest)
	})
	for _, k := range keys {
		s, l := stored.at(k), logged.at(k)
		what := fmt.Sprintf("owner's confirmations of tenant %s, subject %s, action digest %s", k.tenant, k.subject, k.digest)
		for _, actor := range slices.Sorted(mapKeys(mergeCounts(s.by, l.by))) {
			switch got, want := s.by[actor], l.by[actor]; {
			case got > want:
				return differ("%s: the grants table holds %d by %s but the log records %d (a row was added outside custody: the gate would allow an action nobody confirmed)", what, got, actor, want)
			case got < want:
				return differ("%s: the log records %d by %s but the grants table holds %d (a row was deleted)", what, want, actor, got)
			}
		}
		switch {
		case s.used < l.used:
			return differ("%s: the log's gate decisions spent %d but the grants table marks %d used (a spent confirmation was made unused: the gate would allow the action again)", what, l.used, s.used)
		case s.used > l.used:
			return differ("%s: the grants table marks %d used but the log's gate decisions spent %d", what, s.used, l.used)
		}
	}
	return nil
}

// mergeCounts is the union of a's and b's keys.
func mergeCounts(a, b map[string]int) map[string]int {
	m := make(map[string]int, len(a)+len(b))
	for k := range a {
		m[k] = 0
	}
	for k := range b {
		m[k] = 0
	}
	return m
}
