package postgres_test

import (
	"slices"
	"testing"

	custody "github.com/custody-mem/custody"
)

// A database from before migration 008, whose search vectors hold the raw
// words of each record (to_tsvector('simple'): no stems, identifiers
// split), is migrated at open: every vector is rebuilt from the terms of
// internal/lexical, so stemmed words and whole identifiers match, older
// records read with no metadata, and verify passes.
func TestMigrateSearchVectors(t *testing.T) {
	ctx := t.Context()
	m := newMigration(t)
	dsn, service, st, svc, alice, fact := m.dsn, m.service, m.st, m.svc, m.alice, m.fact
	reply := fact("keep each reply short")
	a7777 := fact("savings ACCT-7777")
	a7778 := fact("checking ACCT-7778")
	mustExec(t, st, `UPDATE records SET search = to_tsvector('simple', body || ' ' || key)`)
	mustExec(t, st, `ALTER TABLE records DROP COLUMN metadata`)
	mustExec(t, st, `DELETE FROM schema_migrations WHERE version >= 8`)
	var n int
	if err := st.Pool().QueryRow(ctx, `SELECT COUNT(*) FROM records WHERE search @@ 'acct-7777'::tsquery`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("the rewound vectors hold acct-7777 whole in %d records (%v), want none", n, err)
	}

	st = openDSN(t, dsn) // migrates
	svc = service(st)
	alice, err := svc.Act(ctx, alice.Principal, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		q    string
		want []string
	}{
		{"brief replies", []string{reply}},
		{"ACCT-7777", []string{a7777}},
		{"ACCT", []string{a7777, a7778}},
	} {
		hits, err := svc.Search(ctx, alice, custody.SearchInput{Query: c.q})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range hits {
			got = append(got, h.ID)
			if len(h.Metadata) != 0 {
				t.Errorf("%s after migration has metadata %v", h.ID, h.Metadata)
			}
		}
		slices.Sort(got)
		slices.Sort(c.want)
		if !slices.Equal(got, c.want) {
			t.Errorf("search %q after migration = %v, want %v", c.q, got, c.want)
		}
	}
	expectVerify(t, svc, "")
}
