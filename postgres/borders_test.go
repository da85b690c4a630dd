package postgres_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/postgres"
)

// A server keeps the log border it committed last and reads only the
// log's size while that size is unchanged; when another server has
// appended meanwhile, it reads the whole border again. Either way each
// leaf lands at the next index and the stored nodes give the log's root;
// a write rolled back leaves the kept border as it was.
func TestBorderKeptBetweenBatches(t *testing.T) {
	ctx := t.Context()
	dsn := newDatabase(t)
	a, b := openDSN(t, dsn), openDSN(t, dsn)
	errRolledBack := errors.New("rolled back on purpose")
	appendAt := func(st *postgres.Store, leaf string, want uint64, fail bool) {
		t.Helper()
		err := st.Update(ctx, func(tx custody.Tx) error {
			i, err := tx.AppendLeaf(ctx, "acme", []byte(leaf))
			if err == nil && i != want {
				err = fmt.Errorf("%s appended at %d, want %d", leaf, i, want)
			}
			if err == nil && fail {
				err = errRolledBack
			}
			return err
		})
		if fail && !errors.Is(err, errRolledBack) {
			t.Fatalf("%s: %v, want its own error", leaf, err)
		}
		if !fail && err != nil {
			t.Fatalf("%s: %v", leaf, err)
		}
	}
	reads := func(st *postgres.Store, want int64) {
		t.Helper()
		if got := st.BorderReads(); got != want {
			t.Fatalf("the border was read whole %d times, want %d", got, want)
		}
	}

	appendAt(a, "one", 0, false)
	reads(a, 1) // nothing kept yet
	appendAt(a, "two", 1, false)
	appendAt(a, "three", 2, false)
	reads(a, 1) // the kept border, the size unchanged
	checkTenantLog(t, a, "acme", []string{"one", "two", "three"})

	appendAt(b, "four", 3, false) // another server appends
	appendAt(a, "five", 4, false)
	reads(a, 2) // the size moved: read again
	appendAt(a, "dropped", 5, true)
	appendAt(a, "six", 5, false)
	reads(a, 2)
	checkTenantLog(t, a, "acme", []string{"one", "two", "three", "four", "five", "six"})
	appendAt(b, "seven", 6, false)
	reads(b, 2) // b had kept the border of four
	checkTenantLog(t, b, "acme", []string{"one", "two", "three", "four", "five", "six", "seven"})
}

// Batches of one server that wait for one another's lock use the border
// the one before committed (waiting for its commit's answer if need be),
// and never read it whole again: each append lands once, at the next
// index, and the stored nodes give the root of the leaves as they lie.
func TestBorderKeptUnderConcurrentBatches(t *testing.T) {
	ctx := t.Context()
	st := openDSN(t, newDatabase(t))
	write := func(leaf string) error {
		return st.Update(ctx, func(tx custody.Tx) error {
			_, err := tx.AppendLeaf(ctx, "acme", []byte(leaf))
			return err
		})
	}
	if err := write("first"); err != nil {
		t.Fatal(err)
	}
	const writers, each = 16, 10
	want := map[string]bool{"first": true}
	errs := make(chan error, writers*each)
	var wg sync.WaitGroup
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				errs <- write(fmt.Sprintf("g%d-%d", g, i))
			}
		}()
		for i := range each {
			want[fmt.Sprintf("g%d-%d", g, i)] = true
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	got, err := st.Leaves(ctx, "acme", 0, writers*each+2)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, l := range got {
		if !want[string(l.Data)] {
			t.Fatalf("leaf %q is not one written, or is there twice", l.Data)
		}
		delete(want, string(l.Data))
		order = append(order, string(l.Data))
	}
	if len(want) != 0 {
		t.Fatalf("%d leaves missing", len(want))
	}
	checkTenantLog(t, st, "acme", order)
	if n := st.BorderReads(); n != 1 {
		t.Errorf("the border was read whole %d times, want once (the first write)", n)
	}
}
