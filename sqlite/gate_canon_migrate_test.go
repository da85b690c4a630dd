package sqlite_test

import (
	"path/filepath"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/sqlite"
	"github.com/custody-mem/custody/storetest"
)

// A schema 20 database, whose gate index holds each record's older text
// (an IBAN written with no-break spaces kept them), is migrated at open to
// the canonical gate text (schema 21): the gate then traces the e-mail's
// IBAN to the e-mail, whether its record had been moved into the index or
// still waited in index_pending, and verify passes.
func TestMigrateGateIndexToSchema21(t *testing.T) {
	for _, indexed := range []bool{true, false} {
		t.Run(map[bool]string{true: "indexed", false: "pending"}[indexed], func(t *testing.T) {
			ctx := t.Context()
			dir := t.TempDir()
			path := filepath.Join(dir, "c.db")
			st, key, svc, alice := serviceAt(t, dir)
			mailed, check := storetest.CanonIndexRecords(t, svc, alice)
			if indexed {
				if _, err := svc.Search(ctx, alice, custody.SearchInput{Query: "rent"}); err != nil { // moves them into the indexes
					t.Fatal(err)
				}
			}
			st.Close()
			rewind(t, path,
				`INSERT INTO records_tri (records_tri) VALUES ('delete-all')`,
				`INSERT INTO records_tri (rowid, norm) SELECT rid, lower(body) || ' ' || lower(key) FROM records
 WHERE NOT erased AND rid NOT IN (SELECT rid FROM index_pending)`,
				`UPDATE index_pending SET norm = (SELECT lower(body) || ' ' || lower(key) FROM records r WHERE r.rid = index_pending.rid)`,
				`DROP TABLE endorsements`,
				`PRAGMA user_version = 20`)
			st = reopen(t, path, 20)
			var v int
			if err := st.DB().QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil || v != sqlite.SchemaVersion {
				t.Fatalf("after the migration: user_version %d (%v), want %d", v, err, sqlite.SchemaVersion)
			}
			err := st.View(ctx, func(tx custody.Tx) error {
				recs, err := tx.Mentioning(ctx, custody.Scope{Tenant: alice.Tenant(), Subject: alice.Subject.Name}, custody.MentionQuery{Text: "gb82west12345698765432"})
				if err != nil || len(recs) != 1 || recs[0].ID != mailed {
					t.Errorf("mentioning the canonical IBAN after the migration = %d records, %v; want %s", len(recs), err, mailed)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			check(t, serviceOver(t, st, key))
		})
	}
}
