package custody

import (
	"context"
	"errors"
	"fmt"
)

// holdDescendants makes a restore respect lineage (design rule 10): a
// record of snap whose parent will not be admitted once the restore is done
// — retired or rejected by the registry or the store's tombstones,
// suspended, quarantined, or missing — is restored suspended, as the
// cascade would have left it had the parent been withdrawn in this store,
// and so on transitively. A record the store already holds keeps the
// store's state, as Restore leaves it. The decision goes into registry (the
// states restoreRecord applies, keyed tenant+"\x00"+id) and into the
// record's receipt, so the restore's log entry says why it is suspended.
func (s *Service) holdDescendants(ctx context.Context, tx Tx, snap *Snapshot, registry map[string]State) error {
	inSnap := make(map[string]*Record, len(snap.Records))
	for _, r := range snap.Records {
		inSnap[r.ID] = r
	}
	final := map[string]State{} // the state each id will have after the restore
	var stateOf func(id string, depth int) (State, error)
	stateOf = func(id string, depth int) (State, error) {
		if st, ok := final[id]; ok {
			return st, nil
		}
		if depth > len(snap.Records) {
			return "", badSnapshot("record %s is its own ancestor", id)
		}
		r := inSnap[id]
		st, stored, err := s.restoredState(ctx, tx, snap.Tenant, id, r, registry)
		if err != nil {
			return "", err
		}
		if r != nil && !stored && !st.Terminal() && st != StateSuspended {
			for _, e := range r.Parents {
				pst, err := stateOf(e.ID, depth+1)
				if err != nil {
					return "", err
				}
				if pst == StateAdmitted {
					continue
				}
				st = StateSuspended
				registry[snap.Tenant+"\x00"+id] = st
				r.Receipt = &Receipt{Decision: st, PolicyVersion: r.PolicyVersion, Rules: []string{"cascade"},
					Reason: fmt.Sprintf("parent %s is %s; the derived record stays suspended until it is rebuilt", e.ID, orDefault(string(pst), "missing"))}
				break
			}
		}
		final[id] = st
		return st, nil
	}
	for _, r := range snap.Records {
		if _, err := stateOf(r.ID, 0); err != nil {
			return err
		}
	}
	return nil
}

// restoredState is the state id will have after the restore before lineage
// is considered, and whether the store already holds it: the store's state
// if so; else the snapshot's, overridden by the registry and the store's
// tombstones as restoreRecord does. "" means the record is neither in the
// store nor in the snapshot (r is nil).
func (s *Service) restoredState(ctx context.Context, tx Tx, tenant, id string, r *Record, registry map[string]State) (State, bool, error) {
	cur, err := tx.Record(ctx, tenant, id)
	switch {
	case err == nil:
		return cur.State, true, nil
	case !errors.Is(err, ErrNotFound):
		return "", false, err
	case r == nil:
		return "", false, nil
	}
	st := r.State
	if reg, ok := registry[tenant+"\x00"+id]; ok {
		st = reg
	}
	dead, err := tx.Tombstoned(ctx, tenant, id)
	if err != nil {
		return "", false, err
	}
	if dead && !st.Terminal() {
		st = StateRetired
	}
	return st, false, nil
}
