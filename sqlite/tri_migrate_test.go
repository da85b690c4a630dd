package sqlite_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/sqlite"
	"github.com/custody-mem/custody/storetest"
)

// A schema 19 database, whose gate trigram index keeps positions, is
// migrated at open to one that keeps none: the records indexed before,
// and the one still waiting in index_pending, are found by the gate as
// before, the erased one is not, a text whose trigrams are all in a record
// but not together is not found, and verify passes.
func TestMigrateGateIndexToSchema20(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	path := filepath.Join(dir, "c.db")
	st, key, svc, alice := serviceAt(t, dir)
	fact := storetest.Facter(t, svc, alice)
	payee := fact("pay ACCT-7777 on Fridays")
	scattered := fact("klmn lmno")
	gone := fact("old ACCT-7777 note")
	if _, err := svc.Forget(ctx, alice, gone, "test", true); err != nil {
		t.Fatal(err)
	}
	if err := st.Tidy(ctx); err != nil { // the idle writer moves them into the indexes
		t.Fatal(err)
	}
	waiting := fact("ACCT-7777 again") // stays in index_pending
	st.Close()
	rewind(t, path, `DROP TABLE records_tri`,
		`CREATE VIRTUAL TABLE records_tri USING fts5(norm, content='', contentless_delete=1, tokenize='trigram')`,
		`INSERT INTO records_tri (records_tri, rank) VALUES ('secure-delete', 1)`,
		`INSERT INTO records_tri (rowid, norm) SELECT rid, custody_gate_text(body, key, namespace, source_ref, metadata) FROM records
 WHERE NOT erased AND rid NOT IN (SELECT rid FROM index_pending)`,
		`PRAGMA user_version = 19`)

	st = reopen(t, path, 19)
	var v int
	var ddl string
	if err := st.DB().QueryRowContext(ctx, `SELECT (SELECT sql FROM sqlite_schema WHERE name = 'records_tri'), (SELECT user_version FROM pragma_user_version)`).Scan(&ddl, &v); err != nil {
		t.Fatal(err)
	}
	if v != sqlite.SchemaVersion || !strings.Contains(ddl, "detail=none") {
		t.Fatalf("after migration: user_version %d, records_tri %q; want %d and detail=none", v, ddl, sqlite.SchemaVersion)
	}
	var indexed int
	if err := st.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM records_tri_docsize`).Scan(&indexed); err != nil || indexed < 2 {
		t.Fatalf("records_tri holds %d records after migration (%v); want the two indexed before", indexed, err)
	}
	err := st.View(ctx, func(tx custody.Tx) error {
		for _, c := range []struct {
			text string
			want []string
		}{
			{"acct7777", []string{payee, waiting}},
			{"payacct7777onfridays", []string{payee}},
			{"klmnlmno", []string{scattered}},
			{"klmno", nil},
		} {
			recs, err := tx.Mentioning(ctx, custody.Scope{Tenant: "acme", Subject: "alice"}, custody.MentionQuery{Text: c.text})
			if err != nil {
				return err
			}
			var got []string
			for _, r := range recs {
				got = append(got, r.ID)
			}
			if !sameIDs(got, c.want) {
				t.Errorf("mentioning %q after migration = %v, want %v", c.text, got, c.want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	svc = serviceOver(t, st, key)
	if _, err := svc.Verify(ctx, custody.VerifyOptions{}); err != nil {
		t.Fatalf("verify after migration: %v", err)
	}
}

// sameIDs reports whether a and b hold the same ids, in any order.
func sameIDs(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
