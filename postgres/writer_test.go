package postgres_test

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/postgres"
)

// oneWriterSlot opens a store on a new database whose pool has two
// connections, so one writer slot: every batch waits for the one before.
func oneWriterSlot(t *testing.T) *postgres.Store {
	t.Helper()
	dsn := newDatabase(t)
	if strings.Contains(dsn, "://") {
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		dsn += sep + "pool_max_conns=2"
	} else {
		dsn += " pool_max_conns=2"
	}
	return openDSN(t, dsn)
}

// holdWriter runs a write that holds the only writer slot until n other
// writes are queued behind it, and returns when it holds it; wait waits
// for that write's end.
func holdWriter(t *testing.T, st *postgres.Store, n int) (wait func()) {
	t.Helper()
	holding := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- st.Update(t.Context(), func(custody.Tx) error {
			close(holding)
			for st.Queued() < n {
				runtime.Gosched()
			}
			return nil
		})
	}()
	<-holding
	return func() {
		if err := <-done; err != nil {
			t.Errorf("the write that held the slot: %v", err)
		}
	}
}

// A write that panics in a batch fails alone, with an error that says
// so: its batch-mates commit and are answered, and the next write finds
// the writer slot free.
func TestPanickingWriteFailsAlone(t *testing.T) {
	ctx := t.Context()
	st := oneWriterSlot(t)
	wait := holdWriter(t, st, 6)
	errs := make([]error, 6)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() {
			errs[i] = st.Update(ctx, func(tx custody.Tx) error {
				if i == 2 {
					panic("a bug in a write")
				}
				_, err := tx.AppendLeaf(ctx, fmt.Sprintf("t%d", i), []byte("leaf"))
				return err
			})
		})
	}
	wait()
	wg.Wait()
	for i, err := range errs {
		switch {
		case i == 2 && (err == nil || !strings.Contains(err.Error(), "a bug in a write")):
			t.Errorf("the write that panicked: err = %v, want an error naming the panic", err)
		case i != 2 && err != nil:
			t.Errorf("write %d, in the batch of the one that panicked: %v", i, err)
		}
	}
	for i := range errs {
		want := uint64(1)
		if i == 2 {
			want = 0
		}
		if size, err := st.LogSize(ctx, fmt.Sprintf("t%d", i)); err != nil || size != want {
			t.Errorf("tenant t%d's log: %d leaves, %v; want %d", i, size, err, want)
		}
	}
	if err := st.Update(ctx, func(tx custody.Tx) error { _, err := tx.AppendLeaf(ctx, "t2", []byte("later")); return err }); err != nil {
		t.Errorf("a write after the batch: %v", err)
	}
}

// A write that another write's batch has taken waits for its answer: its
// caller does not take the writer slot to find nothing queued, again and
// again, while that batch runs (it used to, about a core's worth).
func TestTakenWritesWait(t *testing.T) {
	ctx := t.Context()
	st := openDSN(t, newDatabase(t))
	var wg sync.WaitGroup
	const writes = 16
	for i := range writes {
		wg.Go(func() {
			err := st.Update(ctx, func(tx custody.Tx) error {
				_, err := tx.AppendLeaf(ctx, fmt.Sprintf("t%d", i), []byte("leaf"))
				time.Sleep(20 * time.Millisecond) // a batch that takes a while
				return err
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	// A caller can find its write taken just after it looked: a few
	// empty turns, never one per check while a batch runs.
	if n := st.EmptyLeads(); n > writes {
		t.Errorf("%d writer slots taken with nothing queued for %d writes", n, writes)
	}
}
