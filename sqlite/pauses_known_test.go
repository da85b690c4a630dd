package sqlite_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/sqlite"
)

// The writer keeps the tenants' pauses between transactions; what it keeps
// follows pauses made and resumed by itself, by another process on the
// same file, and rolled back in a batch, and a pause past its end stops
// holding writes at its end.
func TestPausesKnownAcrossProcesses(t *testing.T) {
	ctx := t.Context()
	a, b := twoProcesses(t, sqlite.OpenUntidied)
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	open := func(s *sqlite.Store, at time.Time) string {
		t.Helper()
		var ids []string
		err := s.Update(ctx, func(tx custody.Tx) error {
			ps, err := tx.OpenPauses(ctx, "acme", at)
			for _, p := range ps {
				ids = append(ids, p.ID)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(ids, ",")
	}
	pause := func(s *sqlite.Store, id string, until *time.Time) {
		t.Helper()
		p := &custody.Pause{ID: id, Tenant: "acme", Writer: "bot", Reason: "r", By: "acme/admin", CreatedAt: now, Until: until}
		if err := s.Update(ctx, func(tx custody.Tx) error { return tx.InsertPause(ctx, p) }); err != nil {
			t.Fatal(err)
		}
	}
	resume := func(s *sqlite.Store, id string) {
		t.Helper()
		at := now
		p := &custody.Pause{ID: id, Tenant: "acme", ResumedAt: &at, ResumedBy: "acme/admin"}
		if err := s.Update(ctx, func(tx custody.Tx) error { return tx.ResumePause(ctx, p) }); err != nil {
			t.Fatal(err)
		}
	}
	end := now.Add(time.Hour)
	boom := errors.New("boom")
	for _, st := range []struct {
		name string
		do   func()
		want string
		at   time.Time
	}{
		{"none", func() {}, "", now},
		{"paused here", func() { pause(a, "p1", nil) }, "p1", now},
		{"paused by another process", func() { pause(b, "p2", &end) }, "p1,p2", now},
		{"past the second's end", func() {}, "p1", end},
		{"resumed by another process", func() { resume(b, "p1") }, "p2", now},
		{"paused in a batch, its savepoint rolled back", func() {
			errs := sqlite.CommitBatch(ctx, a,
				func(tx custody.Tx) error { _, err := tx.OpenPauses(ctx, "acme", now); return err },
				func(tx custody.Tx) error {
					tx.InsertPause(ctx, &custody.Pause{ID: "p3", Tenant: "acme", Writer: "bot", By: "acme/admin", CreatedAt: now})
					return boom
				},
				func(tx custody.Tx) error { _, err := tx.OpenPauses(ctx, "acme", now); return err })
			if errs[0] != nil || !errors.Is(errs[1], boom) || errs[2] != nil {
				t.Fatal(errs)
			}
		}, "p2", now},
		{"resumed here", func() { resume(a, "p2") }, "", now},
	} {
		st.do()
		if got := open(a, st.at); got != st.want {
			t.Errorf("%s: the writer holds writes for pauses %q; want %q", st.name, got, st.want)
		}
		if got := open(b, st.at); got != st.want {
			t.Errorf("%s: the other process holds writes for pauses %q; want %q", st.name, got, st.want)
		}
	}
}
