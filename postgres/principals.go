package postgres

import (
	"context"
	"fmt"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/tlog"
	"github.com/jackc/pgx/v5"
)

// SetPrincipalLogIndex points a principal at its latest log entry.
func (t *txn) SetPrincipalLogIndex(ctx context.Context, tenant, name string, index uint64) error {
	if t.ro {
		return errReadOnly
	}
	tag, err := t.tx.Exec(ctx, `UPDATE principals SET log_index = $1 WHERE tenant = $2 AND name = $3`, int64(index), tenant, name)
	if err != nil {
		return classify(err)
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("pointing principal %s/%s at log entry %d: %d rows", tenant, name, index, tag.RowsAffected())
	}
	// Every change custody makes to a principal ends here: it moves the
	// principals version itself too, so that servers' caches drop the
	// principal even where the trigger that does it has been disabled.
	_, err = t.tx.Exec(ctx, bumpPrincipalsVersion)
	return classify(err)
}

// bumpPrincipalsVersion moves the principals version (migration 010).
const bumpPrincipalsVersion = `UPDATE principals_version SET n = n + 1 WHERE id = 0`

// migrationSteps are the Go steps of migrations, by name, run after the
// migration's SQL in its transaction.
var migrationSteps = map[string]func(context.Context, pgx.Tx) error{
	"principal_log_index": linkPrincipals,
	"tenant_logs":         tenantLogs,
}

// principalEntryMark is how the transition "principal" is encoded in a
// leaf (its length, then the bytes): a leaf without it is no principal
// entry, so linkPrincipals parses only the few that have it.
var principalEntryMark = append([]byte{byte(len(custody.TransitionPrincipal))}, custody.TransitionPrincipal...)

// linkPrincipals points every principal of an existing database at its
// latest principal entry: one pass over the leaves that may be principal
// entries. A principal the log never introduced keeps no index, and the
// server refuses it.
func linkPrincipals(ctx context.Context, tx pgx.Tx) error {
	rows, err := tx.Query(ctx, `SELECT idx, data FROM log_leaves WHERE position($1::bytea IN data) > 0 ORDER BY idx`, principalEntryMark)
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
		if e, err := tlog.ParseLeaf(data); err == nil && e.Transition == custody.TransitionPrincipal && e.Actor == custody.ServerActor {
			latest[[2]string{e.Tenant, e.Details["name"]}] = idx
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for k, idx := range latest {
		if _, err := tx.Exec(ctx, `UPDATE principals SET log_index = $1 WHERE tenant = $2 AND name = $3`, idx, k[0], k[1]); err != nil {
			return err
		}
	}
	return nil
}

// Tombstones calls fn for every registered retired or rejected id.
func (t *txn) Tombstones(ctx context.Context, fn func(tenant, id string, state custody.State) error) error {
	rows, err := t.tx.Query(ctx, `SELECT tenant, id, state FROM tombstones ORDER BY tenant, id`)
	if err != nil {
		return classify(err)
	}
	var all [][3]string
	for rows.Next() {
		var r [3]string
		if err := rows.Scan(&r[0], &r[1], &r[2]); err != nil {
			rows.Close()
			return classify(err)
		}
		all = append(all, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return classify(err)
	}
	for _, r := range all {
		if err := fn(r[0], r[1], custody.State(r[2])); err != nil {
			return err
		}
	}
	return nil
}

// ScanSessions calls fn for every session.
func (t *txn) ScanSessions(ctx context.Context, fn func(*custody.Session) error) error {
	rows, err := t.tx.Query(ctx, `SELECT id, tenant, subject, opener, created_at FROM sessions ORDER BY tenant, id`)
	if err != nil {
		return classify(err)
	}
	defer rows.Close()
	for rows.Next() {
		var s custody.Session
		var created int64
		if err := rows.Scan(&s.ID, &s.Tenant, &s.Subject, &s.Opener, &created); err != nil {
			return classify(err)
		}
		s.CreatedAt = time.Unix(0, created).UTC()
		if err := fn(&s); err != nil {
			return err
		}
	}
	return classify(rows.Err())
}

// EraseObservations empties the text of the tenant's observations whose
// source is sourceRef.
func (t *txn) EraseObservations(ctx context.Context, tenant, sourceRef string) error {
	if t.ro {
		return errReadOnly
	}
	_, err := t.tx.Exec(ctx, `UPDATE observations SET text = '' WHERE tenant = $1 AND source_ref = $2 AND text <> ''`, tenant, sourceRef)
	return classify(err)
}

// ScanObservations calls fn for every observation.
func (t *txn) ScanObservations(ctx context.Context, fn func(*custody.Observation) error) error {
	rows, err := t.tx.Query(ctx, `SELECT id, tenant, session, channel, text, source_ref, authority, created_at
 FROM observations ORDER BY tenant, id`)
	if err != nil {
		return classify(err)
	}
	defer rows.Close()
	for rows.Next() {
		var o custody.Observation
		var authority int16
		var created int64
		if err := rows.Scan(&o.ID, &o.Tenant, &o.Session, &o.Channel, &o.Text, &o.SourceRef, &authority, &created); err != nil {
			return classify(err)
		}
		o.Authority = custody.Authority(authority)
		o.CreatedAt = time.Unix(0, created).UTC()
		if err := fn(&o); err != nil {
			return err
		}
	}
	return classify(rows.Err())
}
