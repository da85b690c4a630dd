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

// errLockBusy is a lock of a write in a batch that another transaction
// holds: the write is run again at the head of a later batch, where it
// may wait for it (writer.go).
var errLockBusy = errors.New("postgres: a tenant's lock is held by another writer; the write runs again in the next batch")

// lock takes the lock of tenant ("" for every tenant) unless held. A Tx
// that may not wait (a write joining a batch that holds other tenants'
// locks: waiting there could close a cycle with another batch) only
// tries, and refuses the write with errLockBusy when the lock is taken.
// Once a lock fails, every later call fails the same way, so that a
// write cannot go on without the lock it asked for whatever it does with
// the error.
func (l *lockedTx) lock(ctx context.Context, tenant string) error {
	return l.lockWith(ctx, tenant, nil)
}

// lockWith is lock, with then read in the round trip that takes the
// tenant's lock and loads its state, if it takes it there (then.done).
func (l *lockedTx) lockWith(ctx context.Context, tenant string, then *pipelined) error {
	if l.err != nil {
		return l.err
	}
	if l.locks[tenant] || l.locks[""] {
		return nil
	}
	if l.ahead != nil {
		if err := l.lockAhead(ctx, tenant); err != nil {
			l.err = err
			return err
		}
		l.locks[tenant] = true
		return nil
	}
	var err error
	got := true
	switch {
	case l.noWait && tenant == "":
		err = l.t.tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock($1)`, writeLock).Scan(&got)
	case tenant == "":
		_, err = l.t.tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, writeLock)
	default:
		var st *tenantState
		switch {
		case l.noWait:
			st, err = lockAndLoad(ctx, l.t.tx, tenant, l.borders, then, `SELECT pg_try_advisory_xact_lock_shared($1) AND pg_try_advisory_xact_lock($2, hashtext($3))`, true, writeLock, tenantLockSpace, tenant)
		case len(l.locks) == 0:
			st, err = lockAndLoad(ctx, l.t.tx, tenant, l.borders, then, `SELECT pg_advisory_xact_lock_shared($1), pg_advisory_xact_lock($2, hashtext($3))`, false, writeLock, tenantLockSpace, tenant)
		default:
			st, err = lockAndLoad(ctx, l.t.tx, tenant, l.borders, then, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, false, tenantLockSpace, tenant)
		}
		got = st != nil
		if st != nil && l.states != nil {
			l.states[tenant] = st
		}
	}
	switch {
	case err != nil:
		l.err = classify(err)
	case !got:
		l.err = errLockBusy
	default:
		l.locks[tenant] = true
		return nil
	}
	return l.err
}

// deadlocked reports whether err is PostgreSQL breaking a deadlock.
func deadlocked(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "40P01"
}
