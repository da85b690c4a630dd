package postgres_test

import (
	"strings"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/postgres"
)

// A database from before migration 013, whose gate text marks no number,
// is migrated at open: every live record's norm gains the markers of its
// short numbers, so the gate's lookup of an amount of 10 finds the record
// that holds it, and not the one that holds 2010.
func TestMigrateGateNumbers(t *testing.T) {
	ctx := t.Context()
	m := newMigration(t)
	dsn, service, st, alice, fact := m.dsn, m.service, m.st, m.alice, m.fact
	fee := fact("a fee of 10 EUR")
	fact("in 2010 we paid 310")
	mustExec(t, st, `UPDATE records SET norm = split_part(norm, ' _', 1)`)
	mustExec(t, st, `DELETE FROM schema_migrations WHERE version >= 13`)
	mentioning := func(st *postgres.Store, text string) []string {
		t.Helper()
		var ids []string
		err := st.View(ctx, func(tx custody.Tx) error {
			recs, err := tx.Mentioning(ctx, custody.Scope{Tenant: alice.Tenant(), Subject: alice.Subject.Name}, custody.MentionQuery{Text: text})
			for _, r := range recs {
				ids = append(ids, r.ID)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}
	if got := mentioning(st, "_10_"); len(got) != 0 {
		t.Fatalf("before the migration the rewound norms mark 10 in %v, want none (the rewind did not take)", got)
	}

	st = openDSN(t, dsn) // migrates
	if got := mentioning(st, "_10_"); len(got) != 1 || got[0] != fee {
		t.Fatalf("after the migration mentioning _10_ = %v, want [%s]", got, fee)
	}
	var norm string
	if err := st.Pool().QueryRow(ctx, `SELECT norm FROM records WHERE id = $1`, fee).Scan(&norm); err != nil || !strings.HasSuffix(norm, " _10_") {
		t.Fatalf("norm after the migration = %q, %v; want it to end in the marker _10_", norm, err)
	}
	if _, err := service(st).Verify(ctx, custody.VerifyOptions{}); err != nil {
		t.Fatalf("verify after the migration: %v", err)
	}
}
