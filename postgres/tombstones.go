package postgres

import (
	"context"

	custody "github.com/custody-mem/custody"
)

// Tombstones: the ids of records that reached a terminal state (retired
// or rejected), so that a restore never brings one back into force.

// Tombstone is held back with the write's inserts (heldback.go), so that
// a rejected write runs ahead in one round trip too (ahead.go).
func (t *txn) Tombstone(ctx context.Context, tenant, id string, state custody.State) error {
	return t.execLater(ctx, `INSERT INTO tombstones (tenant, id, state) VALUES ($1,$2,$3)
 ON CONFLICT (tenant, id) DO UPDATE SET state = excluded.state`, tenant, id, string(state))
}

func (t *txn) Tombstoned(ctx context.Context, tenant, id string) (bool, error) {
	if !storable(tenant, id) {
		return false, nil
	}
	var ok bool
	err := t.tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM tombstones WHERE tenant = $1 AND id = $2)`, tenant, id).Scan(&ok)
	return ok, classify(err)
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
