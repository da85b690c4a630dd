package postgres

import (
	"context"
	"time"

	custody "github.com/custody-mem/custody"
)

// A tenant's policies: each one set is a row of its own, the newest in
// force (its digest is stored with it, migration 022, for ahead.go).

func (t *txn) Policy(ctx context.Context, tenant string) ([]byte, error) {
	if !storable(tenant) {
		return nil, custody.ErrNotFound
	}
	var text []byte
	err := t.tx.QueryRow(ctx, `SELECT text FROM policies WHERE tenant = $1 ORDER BY seq DESC LIMIT 1`, tenant).Scan(&text)
	return text, notFound(err)
}

func (t *txn) SetPolicy(ctx context.Context, tenant string, text []byte, actor string, at time.Time) error {
	return t.exec(ctx, `INSERT INTO policies (tenant, text, actor, created_at) VALUES ($1,$2,$3,$4)`, tenant, text, actor, at.UnixNano())
}
