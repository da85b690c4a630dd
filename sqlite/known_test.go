package sqlite_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/sqlite"
)

// The writer keeps the tenants' active policies between transactions. A
// policy set by this store, by another process on the same file, or set
// and then rolled back, is the one the next admission reads.
func TestPolicyKnownAcrossProcesses(t *testing.T) {
	ctx := t.Context()
	a, b := twoProcesses(t, sqlite.OpenUntidied)
	policy := func(s *sqlite.Store) string {
		t.Helper()
		var text []byte
		err := s.Update(ctx, func(tx custody.Tx) (err error) {
			text, err = tx.Policy(ctx, "acme")
			return err
		})
		if errors.Is(err, custody.ErrNotFound) {
			return "none"
		}
		if err != nil {
			t.Fatal(err)
		}
		return string(text)
	}
	set := func(tx custody.Tx, text string) error {
		return tx.SetPolicy(ctx, "acme", []byte(text), "acme/admin", time.Now())
	}
	boom := errors.New("boom")
	steps := []struct {
		name string
		do   func()
		want string
	}{
		{"nothing set", func() {}, "none"},
		{"set here", func() {
			if err := a.Update(ctx, func(tx custody.Tx) error { return set(tx, "p1") }); err != nil {
				t.Fatal(err)
			}
		}, "p1"},
		{"set by another process", func() {
			if err := b.Update(ctx, func(tx custody.Tx) error { return set(tx, "p2") }); err != nil {
				t.Fatal(err)
			}
		}, "p2"},
		{"set alone, rolled back", func() {
			if err := a.Update(ctx, func(tx custody.Tx) error { set(tx, "p3"); return boom }); !errors.Is(err, boom) {
				t.Fatal(err)
			}
		}, "p2"},
		{"set in a batch, its savepoint rolled back", func() {
			errs := sqlite.CommitBatch(ctx, a,
				func(tx custody.Tx) error { _, err := tx.Policy(ctx, "acme"); return err },
				func(tx custody.Tx) error { set(tx, "p4"); return boom },
				func(tx custody.Tx) error { _, err := tx.Policy(ctx, "acme"); return err })
			if errs[0] != nil || !errors.Is(errs[1], boom) || errs[2] != nil {
				t.Fatal(errs)
			}
		}, "p2"},
	}
	for _, st := range steps {
		st.do()
		if got := policy(a); got != st.want {
			t.Errorf("%s: the writer reads policy %q; want %q", st.name, got, st.want)
		}
		if got := policy(b); got != st.want {
			t.Errorf("%s: the other process reads policy %q; want %q", st.name, got, st.want)
		}
	}
}

// twoProcesses opens two stores on one new file, as two processes would:
// the first with open, the second with sqlite.Open.
func twoProcesses(t *testing.T, open func(context.Context, string) (*sqlite.Store, error)) (a, b *sqlite.Store) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "c.db")
	a, err := open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	b, err = sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return a, b
}
