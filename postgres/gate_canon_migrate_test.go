package postgres_test

import (
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/storetest"
)

// A database from before migration 014, whose norm holds each record's
// older gate text (an IBAN written with no-break spaces kept them), and
// which has no endorsements table, is migrated at open: every live
// record's norm is its canonical gate text, so the gate traces the
// e-mail's IBAN to the e-mail, and verify passes.
func TestMigrateGateCanon(t *testing.T) {
	m := newMigration(t)
	dsn, service, st, svc, alice := m.dsn, m.service, m.st, m.svc, m.alice
	_, check := storetest.CanonIndexRecords(t, svc, alice)
	mustExec(t, st, `UPDATE records SET norm = lower(body) || ' ' || lower(key)`)
	err := st.View(t.Context(), func(tx custody.Tx) error {
		recs, err := tx.Mentioning(t.Context(), custody.Scope{Tenant: alice.Tenant(), Subject: alice.Subject.Name}, custody.MentionQuery{Text: "gb82west12345698765432"})
		if len(recs) != 0 {
			t.Fatalf("before the migration the rewound norms hold the canonical IBAN in %d records (the rewind did not take)", len(recs))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, st, `DROP TABLE endorsements`)
	mustExec(t, st, `DELETE FROM schema_migrations WHERE version >= 14`)
	st = openDSN(t, dsn) // migrates
	check(t, service(st))
}
