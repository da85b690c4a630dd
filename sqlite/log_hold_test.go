package sqlite_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/sqlite"
)

// A write that holds its log rows (custody.LogHolder) reads what it
// appended as if inserted, inserts it all at its end, and a failed one
// leaves nothing behind; the tree stored is the one its leaves make, and
// the next append, held or not, goes on at the right index.
func TestHeldLogRows(t *testing.T) {
	ctx := t.Context()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	write := func(hold bool, from, n int, fail bool) error {
		boom := errors.New("boom")
		err := s.Update(ctx, func(tx custody.Tx) error {
			h := tx.(custody.LogHolder)
			if hold {
				h.HoldLog()
			}
			for i := from; i < from+n; i++ {
				idx, err := tx.AppendLeaf(ctx, "acme", fmt.Appendf(nil, "leaf %d", i))
				if err != nil || idx != uint64(i) {
					return fmt.Errorf("append %d at %d: %v", i, idx, err)
				}
			}
			// Read back within the write: every held row is seen.
			if size, err := tx.LogSize(ctx, "acme"); err != nil || size != uint64(from+n) {
				return fmt.Errorf("within the write the log holds %d, %v; want %d", size, err, from+n)
			}
			if ls, err := tx.Leaves(ctx, "acme", uint64(from), uint64(from+n)); err != nil || len(ls) != n || n > 0 && string(ls[n-1].Data) != fmt.Sprintf("leaf %d", from+n-1) {
				return fmt.Errorf("within the write, leaves %d to %d: %d, %v", from, from+n, len(ls), err)
			}
			for i := from + n; i < from+n+3; i++ { // appended after a read
				if _, err := tx.AppendLeaf(ctx, "acme", fmt.Appendf(nil, "leaf %d", i)); err != nil {
					return err
				}
			}
			if fail {
				h.DropLog()
				return boom
			}
			if hold {
				return h.FlushLog(ctx)
			}
			return nil
		})
		if fail && !errors.Is(err, boom) {
			return fmt.Errorf("a failing write returned %v", err)
		}
		if fail {
			return nil
		}
		return err
	}
	for _, w := range []struct {
		hold    bool
		from, n int
		fail    bool
	}{
		{true, 0, 150, false}, // more than one statement's worth (64)
		{true, 153, 10, true},
		{false, 153, 1, false},
		{true, 157, 64, false},
		{true, 224, 2, true},
		{true, 224, 0, false},
	} {
		if err := write(w.hold, w.from, w.n, w.fail); err != nil {
			t.Fatalf("%+v: %v", w, err)
		}
	}
	size, err := s.LogSize(ctx, "acme")
	if err != nil || size != 227 {
		t.Fatalf("log size %d, %v; want 227", size, err)
	}
	leaves := checkStoredRoot(t, s, "acme", size)
	for i, l := range leaves {
		if l.Index != uint64(i) {
			t.Fatalf("leaf %d has index %d", i, l.Index)
		}
	}
}
