package sqlite_test

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/sqlite"
)

// Concurrent writers commit either themselves (when no commit is under
// way) or through the writer goroutine's batches. Every admitted write is
// kept, every failed one leaves nothing, and the log still verifies.
func TestConcurrentWriters(t *testing.T) {
	ctx := t.Context()
	st, _, svc, alice := serviceAt(t, t.TempDir())
	const writers, each = 8, 40
	boom := errors.New("boom")
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if i%5 == 4 { // a write that appends to the log, then fails
					err := st.Update(ctx, func(tx custody.Tx) error {
						if _, err := tx.AppendLeaf(ctx, "acme", []byte("rolled back")); err != nil {
							return err
						}
						return boom
					})
					if !errors.Is(err, boom) {
						errs <- fmt.Errorf("failing write: %v", err)
					}
					continue
				}
				body := fmt.Sprintf("writer%d note%d", w, i)
				if _, err := svc.Remember(ctx, alice, custody.Candidate{Namespace: "n", Class: custody.ClassEpisode, Body: body, Channel: "user"}); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	page, err := svc.List(ctx, alice, custody.ListInput{Namespace: "n", Limit: custody.MaxListLimit})
	if err != nil {
		t.Fatal(err)
	}
	if want := writers * each * 4 / 5; len(page.Items) != want {
		t.Errorf("%d records after the concurrent writes; want %d", len(page.Items), want)
	}
	for _, r := range page.Items {
		if r.Body == "rolled back" {
			t.Errorf("a failed write left record %s", r.ID)
		}
	}
	rep, err := svc.Verify(ctx, custody.VerifyOptions{})
	if err != nil {
		t.Fatalf("verify after concurrent writes: %v (%+v)", err, rep)
	}
}

// A write after Close fails at once instead of waiting for a writer that
// is gone.
func TestUpdateAfterClose(t *testing.T) {
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Update(t.Context(), func(custody.Tx) error { return nil }); err != nil {
		t.Fatalf("a write before Close: %v", err)
	}
	st.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	err = st.Update(ctx, func(custody.Tx) error { return nil })
	if err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a write after Close = %v; want an error at once", err)
	}
}

// When database/sql gives up on the writer's connection, the next write
// takes a fresh one, and the log and policies it knew are read again.
func TestWriterReplacesABadConnection(t *testing.T) {
	ctx := t.Context()
	st, err := sqlite.OpenUntidied(ctx, filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	appendLeaf := func(leaf string) (uint64, error) {
		var idx uint64
		err := st.Update(ctx, func(tx custody.Tx) (err error) {
			idx, err = tx.AppendLeaf(ctx, "acme", []byte(leaf))
			return err
		})
		return idx, err
	}
	for i, leaf := range []string{"one", "two"} {
		if idx, err := appendLeaf(leaf); err != nil || idx != uint64(i) {
			t.Fatalf("append %s = %d, %v", leaf, idx, err)
		}
	}
	if err := sqlite.BreakWriterConn(st); !errors.Is(err, driver.ErrBadConn) {
		t.Fatalf("breaking the connection: %v", err)
	}
	if idx, err := appendLeaf("three"); err != nil || idx != 2 {
		t.Fatalf("append after the connection went bad = %d, %v; want 2", idx, err)
	}
	if size, err := st.LogSize(ctx, "acme"); err != nil || size != 3 {
		t.Fatalf("log size %d, %v; want 3", size, err)
	}
}

// A store whose writer's connection database/sql gave up on closes
// cleanly without another write: the statements prepared on it went with
// it, and closing them again would read freed memory in the driver. Its
// twin: a store closed after a write on the replaced connection.
func TestCloseAfterTheWriterConnWentBad(t *testing.T) {
	for _, writeAfter := range []bool{false, true} {
		st, err := sqlite.OpenUntidied(t.Context(), filepath.Join(t.TempDir(), "c.db"))
		if err != nil {
			t.Fatal(err)
		}
		write := func() error {
			return st.Update(t.Context(), func(tx custody.Tx) error {
				_, err := tx.AppendLeaf(t.Context(), "acme", []byte("leaf"))
				return err
			})
		}
		if err := write(); err != nil {
			t.Fatal(err)
		}
		if err := sqlite.BreakWriterConn(st); !errors.Is(err, driver.ErrBadConn) {
			t.Fatalf("breaking the connection: %v", err)
		}
		if writeAfter {
			if err := write(); err != nil {
				t.Fatalf("a write on the replaced connection: %v", err)
			}
		}
		if err := st.Close(); err != nil {
			t.Errorf("close (a write after the connection went bad: %v): %v", writeAfter, err)
		}
	}
}
