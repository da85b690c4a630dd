package sqlite_test

import (
	"bytes"
	"errors"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/sqlite"
	"github.com/custody-mem/custody/tlog"
)

// The writer keeps the log's border nodes between appends. Another process
// appending to the same file, after one of our appends rolled back or after
// one committed, must not make the next append build on stale nodes or
// reuse an index.
func TestLogTipAcrossProcesses(t *testing.T) {
	ctx := t.Context()
	a, b := twoProcesses(t, sqlite.Open)
	appendLeaf := func(s *sqlite.Store, leaf string, fail bool) {
		t.Helper()
		boom := errors.New("boom")
		err := s.Update(ctx, func(tx custody.Tx) error {
			if _, err := tx.AppendLeaf(ctx, "acme", []byte(leaf)); err != nil {
				return err
			}
			if fail {
				return boom
			}
			return nil
		})
		if fail != errors.Is(err, boom) || !fail && err != nil {
			t.Fatalf("append %s: %v", leaf, err)
		}
	}
	appendLeaf(a, "one", false)
	appendLeaf(a, "two", false)
	appendLeaf(a, "rolled back", true)
	appendLeaf(b, "three", false)
	appendLeaf(a, "four", false)
	appendLeaf(b, "five", false)
	appendLeaf(a, "six", false)
	appendLeaf(a, "seven", false)

	size, err := a.LogSize(ctx, "acme")
	if err != nil || size != 7 {
		t.Fatalf("log size %d, %v; want 7", size, err)
	}
	checkStoredRoot(t, a, "acme", size)
}

// checkStoredRoot fails unless the root of tenant's log of size, from the
// nodes s stored, is the root rebuilt from its leaves, and returns them.
func checkStoredRoot(t *testing.T, s *sqlite.Store, tenant string, size uint64) []custody.Leaf {
	t.Helper()
	ctx := t.Context()
	leaves, err := s.Leaves(ctx, tenant, 0, size)
	if err != nil {
		t.Fatal(err)
	}
	_, _, want, err := tlog.Rebuild(func(yield func(uint64, []byte) bool) {
		for _, l := range leaves {
			if !yield(l.Index, l.Data) {
				return
			}
		}
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := tlog.RootHash(ctx, custody.LogOf(s, tenant), size)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("stored root %x, %v; recomputed from the leaves %x", got, err, want)
	}
	return leaves
}
