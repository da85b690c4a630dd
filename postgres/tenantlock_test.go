package postgres_test

import (
	"fmt"
	"testing"

	custody "github.com/custody-mem/custody"
)

// Writes of different tenants do not wait on one another: while a
// transaction that appended to acme's log is open, beta's write commits.
// Its twin: a second write to acme's log waits (on acme's advisory lock)
// until the first commits, and then appends after it.
func TestTenantWritesDoNotWaitOnEachOther(t *testing.T) {
	ctx := t.Context()
	st := openDSN(t, newDatabase(t))
	held, release := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- st.Update(ctx, func(tx custody.Tx) error {
			if _, err := tx.AppendLeaf(ctx, "acme", []byte("acme one")); err != nil {
				return err
			}
			close(held)
			<-release
			return nil
		})
	}()
	<-held
	if err := st.Update(ctx, func(tx custody.Tx) error {
		_, err := tx.AppendLeaf(ctx, "beta", []byte("beta one"))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if n, err := st.LogSize(ctx, "beta"); err != nil || n != 1 {
		t.Fatalf("beta's log after its write, acme's open: %d, %v", n, err)
	}

	second := make(chan error, 1)
	go func() {
		second <- st.Update(ctx, func(tx custody.Tx) error {
			i, err := tx.AppendLeaf(ctx, "acme", []byte("acme two"))
			if err == nil && i != 1 {
				err = fmt.Errorf("acme's second write appended at %d, want 1", i)
			}
			return err
		})
	}()
	for waiting := 0; waiting == 0; { // until the second write waits on a lock
		if err := st.Pool().QueryRow(ctx, `SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-second:
			t.Fatalf("acme's second write finished (%v) while the first held acme's log", err)
		default:
		}
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	if n, err := st.LogSize(ctx, "acme"); err != nil || n != 2 {
		t.Fatalf("acme's log: %d, %v; want 2", n, err)
	}
}

// A write that joins a batch holding another tenant's lock does not wait
// for a lock held elsewhere (two batches waiting on each other's tenants
// would deadlock): it leaves its batch, which commits without it, and runs
// at the head of the next batch, where it waits its turn. Its batch-mates
// and the write itself all commit, each in its tenant's log.
func TestBatchWriteDefersABusyLock(t *testing.T) {
	ctx := t.Context()
	st := openDSN(t, newDatabase(t))
	holder, err := st.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback(ctx)
	if _, err := holder.Exec(ctx, `SELECT pg_advisory_xact_lock(1668641652, hashtext('beta'))`); err != nil { // "cust", beta
		t.Fatal(err)
	}
	appendTo := func(tenant, data string) func(custody.Tx) error {
		return func(tx custody.Tx) error {
			_, err := tx.AppendLeaf(ctx, tenant, []byte(data))
			return err
		}
	}
	done := make(chan []error, 1)
	go func() {
		done <- st.UpdateEach(ctx, appendTo("acme", "acme one"), appendTo("beta", "beta one"), appendTo("acme", "acme two"))
	}()
	for n := uint64(0); n < 2; { // acme's writes commit while beta's lock is held
		if n, err = st.LogSize(ctx, "acme"); err != nil {
			t.Fatal(err)
		}
		select {
		case errs := <-done:
			t.Fatalf("the batch finished (%v) while beta's lock was held elsewhere", errs)
		default:
		}
		var waiting int
		if err := st.Pool().QueryRow(ctx, `SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 && n < 2 {
			if n, err = st.LogSize(ctx, "acme"); err == nil && n < 2 {
				t.Fatal("the batch waits for beta's lock with acme's writes uncommitted")
			}
		}
	}
	if n, err := st.LogSize(ctx, "beta"); err != nil || n != 0 {
		t.Fatalf("beta's log while its lock is held: %d, %v", n, err)
	}
	if err := holder.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	for i, err := range <-done {
		if err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	if n, err := st.LogSize(ctx, "beta"); err != nil || n != 1 {
		t.Fatalf("beta's log after its lock was released: %d, %v; want 1", n, err)
	}
}
