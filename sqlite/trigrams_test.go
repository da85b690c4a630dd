package sqlite_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/sqlite"
)

func pendingTrigrams(t *testing.T, st *sqlite.Store) int {
	t.Helper()
	var n int
	if err := st.DB().QueryRowContext(t.Context(), `SELECT COUNT(*) FROM tri_pending`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// The gate finds a value in a record whose trigrams are still pending
// exactly as in one whose trigrams are indexed, and an erased record in
// neither; a batch that fills tri_pending moves it into the index.
func TestPendingTrigrams(t *testing.T) {
	ctx := t.Context()
	st, _, svc, alice := serviceOn(t, t.TempDir(), sqlite.OpenUntidied)
	rev := reviewer(t, svc)
	remember := func(body string) string {
		r, err := svc.Remember(ctx, alice, custody.Candidate{Namespace: "n", Class: custody.ClassFact, Body: body, Channel: "user"})
		if err != nil {
			t.Fatal(err)
		}
		return r.ID
	}
	mentioning := func(v string) []string {
		var ids []string
		err := st.View(ctx, func(tx custody.Tx) error {
			recs, err := tx.Mentioning(ctx, "acme", v, 100)
			for _, r := range recs {
				ids = append(ids, r.ID)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(ids)
		return ids
	}
	old := remember("Pay rent to DE89 3704-0044 monthly")
	oldErased := remember("old card 4111-2222-3333")
	if err := st.Tidy(ctx); err != nil {
		t.Fatal(err)
	}
	if n := pendingTrigrams(t, st); n != 0 {
		t.Fatalf("%d rows pending after tidying, want 0", n)
	}
	fresh := remember("the new IBAN is de89370400449 for rent")
	freshErased := remember("new card 4111 2222 3333")
	if n := pendingTrigrams(t, st); n != 2 {
		t.Fatalf("%d rows pending after two writes, want 2", n)
	}
	both := []string{old, fresh}
	slices.Sort(both)
	for _, v := range []string{"de8937040044", "DE8937040044", "37040044"} {
		if got := mentioning(v); !slices.Equal(got, both) {
			t.Errorf("mentioning %q with one record pending = %v, want %v", v, got, both)
		}
	}
	if got := mentioning("newiban"); !slices.Equal(got, []string{fresh}) {
		t.Errorf("mentioning a pending record's words = %v, want [%s]", got, fresh)
	}
	for _, id := range []string{oldErased, freshErased} {
		if _, err := svc.Retire(ctx, rev, id, "", true); err != nil {
			t.Fatal(err)
		}
	}
	if n := pendingTrigrams(t, st); n != 1 {
		t.Errorf("%d rows pending after erasing one, want 1", n)
	}
	if got := mentioning("411122223333"); len(got) != 0 {
		t.Errorf("mentioning erased records = %v, want none", got)
	}
	if err := st.Tidy(ctx); err != nil {
		t.Fatal(err)
	}
	if got := mentioning("de8937040044"); !slices.Equal(got, both) {
		t.Errorf("mentioning after the move = %v, want %v", got, both)
	}
	if got := mentioning("411122223333"); len(got) != 0 {
		t.Errorf("mentioning erased records after the move = %v, want none", got)
	}

	// One batch that fills tri_pending commits with it moved.
	err := st.Update(ctx, func(tx custody.Tx) error {
		for i := range 300 {
			r := &custody.Record{ID: fmt.Sprintf("01JBATCH%018d", i), Tenant: "acme", Owner: "alice", Namespace: "n",
				Class: custody.ClassFact, Body: fmt.Sprintf("batch value ZZ%04d", i), Channel: "user", Writer: "acme/alice",
				Authority: custody.AuthorityUser, Audience: custody.AudienceOwner, State: custody.StateAdmitted, Version: 1}
			if err := tx.InsertRecord(ctx, r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := pendingTrigrams(t, st); n != 0 {
		t.Errorf("%d rows pending after a batch of 300, want 0", n)
	}
	if got := mentioning("zz0299"); len(got) != 1 {
		t.Errorf("mentioning a moved batch record = %v, want one", got)
	}
}

// Verify checks the gate's pending trigram rows as it checks the indexed
// ones: a pending row deleted or rewritten is found, and the untouched
// store passes.
func TestVerifyChecksPendingTrigrams(t *testing.T) {
	ctx := t.Context()
	for _, tc := range []struct{ name, sql, want string }{
		{"deleted", `DELETE FROM tri_pending`, "no row in the gate's trigram index"},
		{"rewritten", `UPDATE tri_pending SET norm = 'acct1042 '`, "not its own"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, _, svc, alice := serviceOn(t, t.TempDir(), sqlite.OpenUntidied)
			if _, err := svc.Remember(ctx, alice, custody.Candidate{Namespace: "n", Class: custody.ClassFact, Body: "pay ACCT-7777", Channel: "user"}); err != nil {
				t.Fatal(err)
			}
			if n := pendingTrigrams(t, st); n != 1 {
				t.Fatalf("%d rows pending; want 1", n)
			}
			if _, err := svc.Verify(ctx, custody.VerifyOptions{}); err != nil {
				t.Fatalf("untouched store: %v", err)
			}
			if _, err := st.DB().ExecContext(ctx, tc.sql); err != nil {
				t.Fatal(err)
			}
			_, err := svc.Verify(ctx, custody.VerifyOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("verify = %v; want a difference saying %q", err, tc.want)
			}
		})
	}
}
