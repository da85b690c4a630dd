package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/tlog"
)

// SetPrincipalLogIndex points a principal at its latest log entry.
func (t *txn) SetPrincipalLogIndex(ctx context.Context, tenant, name string, index uint64) error {
	if t.ro {
		return errReadOnly
	}
	res, err := t.ExecContext(ctx, `UPDATE principals SET log_index = ? WHERE tenant = ? AND name = ?`, int64(index), tenant, name)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("pointing principal %s/%s at log entry %d: %d rows, %v", tenant, name, index, n, err)
	}
	// Every change custody makes to a principal ends here: it moves the
	// principals version itself too, so that servers' caches drop the
	// principal even where the trigger that does it has been dropped.
	return t.exec(ctx, `UPDATE principals_version SET n = n + 1 WHERE id = 0`)
}

// principalEntryMark is how the transition "principal" is encoded in a
// leaf (its length, then the bytes): a leaf without it is no principal
// entry, so the backfill below parses only the few that have it.
var principalEntryMark = append([]byte{byte(len(custody.TransitionPrincipal))}, custody.TransitionPrincipal...)

// linkPrincipals points every principal of a schema 9 (or older) database
// at its latest principal entry (schema 10): one pass over the leaves
// that may be principal entries. A principal the log never introduced
// keeps no index, and the server refuses it. leaves is the table of the
// shared log (log_leaves_12 while schema 13 moves it).
func linkPrincipals(ctx context.Context, tx *sql.Tx, leaves string) error {
	rows, err := tx.QueryContext(ctx, `SELECT idx, data FROM `+leaves+` WHERE instr(`+leafFunc+`(data), ?) > 0 ORDER BY idx`, principalEntryMark)
	if err != nil {
		return err
	}
	latest := map[[2]string]int64{}
	for rows.Next() {
		var idx int64
		var data []byte
		if err := rows.Scan(&idx, &data); err != nil {
			rows.Close()
			return err
		}
		if e, err := tlog.ParseLeaf(unpackLeaf(data)); err == nil && e.Transition == custody.TransitionPrincipal && e.Actor == custody.ServerActor {
			latest[[2]string{e.Tenant, e.Details["name"]}] = idx
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for k, idx := range latest {
		if _, err := tx.ExecContext(ctx, `UPDATE principals SET log_index = ? WHERE tenant = ? AND name = ?`, idx, k[0], k[1]); err != nil {
			return err
		}
	}
	return nil
}

// Tombstones calls fn for every registered retired or rejected id.
func (t *txn) Tombstones(ctx context.Context, fn func(tenant, id string, state custody.State) error) error {
	rows, err := t.QueryContext(ctx, `SELECT tenant, id, state FROM tombstones ORDER BY tenant, id`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var tenant, id, state string
		if err := rows.Scan(&tenant, &id, &state); err != nil {
			return err
		}
		if err := fn(tenant, id, custody.State(state)); err != nil {
			return err
		}
	}
	return rows.Err()
}

// ScanSessions calls fn for every session.
func (t *txn) ScanSessions(ctx context.Context, fn func(*custody.Session) error) error {
	rows, err := t.QueryContext(ctx, `SELECT id, tenant, subject, opener, created_at FROM sessions ORDER BY tenant, id`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var s custody.Session
		var created int64
		if err := rows.Scan(&s.ID, &s.Tenant, &s.Subject, &s.Opener, &created); err != nil {
			return err
		}
		s.CreatedAt = time.Unix(0, created).UTC()
		if err := fn(&s); err != nil {
			return err
		}
	}
	return rows.Err()
}

// EraseObservations empties the text of the tenant's observations whose
// source is sourceRef.
func (t *txn) EraseObservations(ctx context.Context, tenant, sourceRef string) error {
	return t.exec(ctx, `UPDATE observations SET text = '' WHERE tenant = ? AND source_ref = ? AND text != ''`, tenant, sourceRef)
}

// ScanObservations calls fn for every observation.
func (t *txn) ScanObservations(ctx context.Context, fn func(*custody.Observation) error) error {
	rows, err := t.QueryContext(ctx, `SELECT id, tenant, session, channel, text, source_ref, authority, created_at
 FROM observations ORDER BY tenant, id`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var o custody.Observation
		var created int64
		if err := rows.Scan(&o.ID, &o.Tenant, &o.Session, &o.Channel, &o.Text, &o.SourceRef, &o.Authority, &created); err != nil {
			return err
		}
		o.CreatedAt = time.Unix(0, created).UTC()
		if err := fn(&o); err != nil {
			return err
		}
	}
	return rows.Err()
}
