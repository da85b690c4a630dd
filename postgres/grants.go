package postgres

import (
	"context"
	"time"

	custody "github.com/custody-mem/custody"
)

// Grants: an owner's one-time confirmation of an exact action (the
// gate's), used at most once.

func (t *txn) InsertGrant(ctx context.Context, g *custody.Grant) error {
	return t.exec(ctx, `INSERT INTO grants (id, tenant, subject, digest, actor, created_at) VALUES ($1,$2,$3,$4,$5,$6)`,
		g.ID, g.Tenant, g.Subject, g.Digest, g.Actor, g.CreatedAt.UnixNano())
}

func (t *txn) UseGrant(ctx context.Context, tenant, subject, digest string, at time.Time) (bool, error) {
	if t.ro {
		return false, errReadOnly
	}
	if !storable(tenant, subject, digest) {
		return false, nil
	}
	tag, err := t.tx.Exec(ctx, `UPDATE grants SET used_at = $1 WHERE id = (SELECT id FROM grants
 WHERE tenant = $2 AND subject = $3 AND digest = $4 AND used_at IS NULL ORDER BY id LIMIT 1 FOR UPDATE)`,
		at.UnixNano(), tenant, subject, digest)
	if err != nil {
		return false, classify(err)
	}
	return tag.RowsAffected() == 1, nil
}

// ScanGrants calls fn for every grant, by tenant and id.
func (t *txn) ScanGrants(ctx context.Context, fn func(*custody.StoredGrant) error) error {
	rows, err := t.tx.Query(ctx, `SELECT id, tenant, subject, digest, actor, created_at, used_at FROM grants ORDER BY tenant, id`)
	if err != nil {
		return classify(err)
	}
	defer rows.Close()
	for rows.Next() {
		var g custody.StoredGrant
		var created int64
		var used *int64
		if err := rows.Scan(&g.ID, &g.Tenant, &g.Subject, &g.Digest, &g.Actor, &created, &used); err != nil {
			return classify(err)
		}
		g.CreatedAt = time.Unix(0, created).UTC()
		if used != nil {
			at := time.Unix(0, *used).UTC()
			g.UsedAt = &at
		}
		if err := fn(&g); err != nil {
			return err
		}
	}
	return classify(rows.Err())
}
