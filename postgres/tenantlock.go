package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5/pgconn"
)

// Writers lock per tenant.
//
// Each tenant has its own log, so a write needs only its tenant's rows to
// stand still: lockedTx takes, before a transaction's first statement on a
// tenant, the transaction-scoped advisory lock of that tenant (the pair
// tenantLockSpace, hashtext(tenant); two tenants whose names hash alike
// merely share a lock) and, shared, the store lock writeLock. A write that
// reads or changes every tenant's rows (a scan of them all, a reindex)
// takes the store lock exclusively instead, and so waits for every other
// writer. Two transactions that lock two tenants in opposite orders
// deadlock; PostgreSQL aborts one of them, and Update runs it again.

// tenantLockSpace is the first key of the tenants' advisory locks ("cust").
const tenantLockSpace int32 = 0x63757374

// maxDeadlockRetries bounds how often Update runs a transaction again that
// PostgreSQL aborted to break a deadlock between tenants' locks.
const maxDeadlockRetries = 8

// lock takes the lock of tenant ("" for every tenant) unless held.
func (l *lockedTx) lock(ctx context.Context, tenant string) error {
	if l.locks[tenant] || l.locks[""] {
		return nil
	}
	var err error
	switch {
	case tenant == "":
		_, err = l.t.tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, writeLock)
	case len(l.locks) == 0:
		_, err = l.t.tx.Exec(ctx, `SELECT pg_advisory_xact_lock_shared($1), pg_advisory_xact_lock($2, hashtext($3))`, writeLock, tenantLockSpace, tenant)
	default:
		_, err = l.t.tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, tenantLockSpace, tenant)
	}
	if err != nil {
		return classify(err)
	}
	l.locks[tenant] = true
	return nil
}

// deadlocked reports whether err is PostgreSQL breaking a deadlock.
func deadlocked(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "40P01"
}
