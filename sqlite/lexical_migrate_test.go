package sqlite_test

import (
	"database/sql"
	"path/filepath"
	"slices"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/sqlite"
	"github.com/custody-mem/custody/storetest"
)

// A schema 11 database, whose search index holds the raw words of each
// record (unicode61: no stems, identifiers split), is migrated at open to
// the terms of internal/lexical, the records indexed before and the one
// still waiting in index_pending alike: stemmed words and whole
// identifiers match afterwards, older records read with no metadata, and
// verify passes.
func TestMigrateSearchIndexToSchema14(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	path := filepath.Join(dir, "c.db")
	st, key, svc, alice := serviceAt(t, dir)
	p := alice.Principal
	fact := storetest.Facter(t, svc, alice)
	reply := fact("keep each reply short")
	a7777 := fact("savings ACCT-7777")
	a7778 := fact("checking ACCT-7778")
	if err := st.Tidy(ctx); err != nil { // the idle writer moves the three into the index
		t.Fatal(err)
	}
	run := fact("I run at dawn") // stays in index_pending
	st.Close()
	rewind(t, path, `DROP TABLE records_fts`,
		`CREATE VIRTUAL TABLE records_fts USING fts5(body, key, content='', contentless_delete=1, tokenize='unicode61')`,
		`INSERT INTO records_fts (rowid, body, key) SELECT rid, body, key FROM records WHERE rid NOT IN (SELECT rid FROM index_pending)`,
		`ALTER TABLE records DROP COLUMN metadata`, `PRAGMA user_version = 11`)
	raw := func(word string) (n int) {
		t.Helper()
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM records_fts WHERE records_fts MATCH ?`, word).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := raw("7778"); n != 1 {
		t.Fatalf("the schema 11 index finds %d records by the raw part 7778, want 1 (the rewind did not take)", n)
	}

	st = reopen(t, path, 11)
	var v int
	if err := st.DB().QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil || v != sqlite.SchemaVersion {
		t.Fatalf("user_version after migration = %d, %v; want %d", v, err, sqlite.SchemaVersion)
	}
	svc = serviceOver(t, st, key)
	alice, _ = svc.Act(ctx, p, "")
	for _, c := range []struct {
		q    string
		want []string
	}{
		{"brief replies", []string{reply}},
		{"running", []string{run}},
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
	if _, err := svc.Verify(ctx, custody.VerifyOptions{}); err != nil {
		t.Errorf("verify after migration: %v", err)
	}
}

// A schema 27 database, whose search index holds the terms of text only
// lower-cased, is migrated at open to the terms of folded text (schema
// 28): a fullwidth ACCT-7777 and one with Arabic-Indic digits are the
// identifier acct-7777 in the index afterwards, as the record written in
// ASCII is, and the twin ACCT-7778 is not; verify passes.
func TestMigrateSearchIndexToSchema28(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	path := filepath.Join(dir, "c.db")
	st, key, svc, alice := serviceAt(t, dir)
	fact := storetest.Facter(t, svc, alice)
	wide := fact("savings ＡＣＣＴ－７７７７")
	arabic := fact("savings ACCT-٧٧٧٧")
	plain := fact("savings ACCT-7777")
	fact("checking ACCT-7778")
	if err := st.Tidy(ctx); err != nil { // the idle writer moves them into the index
		t.Fatal(err)
	}
	st.Close()
	// The index as schema 27 wrote it: the old terms of the two folded
	// spellings (fullwidth and Arabic-Indic parts, split at the fullwidth
	// hyphen).
	rewind(t, path,
		`DELETE FROM records_fts WHERE rowid IN (SELECT rid FROM records WHERE id IN ('`+wide+`', '`+arabic+`'))`,
		`INSERT INTO records_fts (rowid, body, key) SELECT rid, 'save ａｃｃｔ ７７７７', '' FROM records WHERE id = '`+wide+`'`,
		`INSERT INTO records_fts (rowid, body, key) SELECT rid, 'save acct-٧٧٧٧ acct ٧٧٧٧', '' FROM records WHERE id = '`+arabic+`'`,
		`PRAGMA user_version = 27`)
	match := func(db *sql.DB, term string) []string {
		t.Helper()
		rows, err := db.QueryContext(ctx, `SELECT r.id FROM records_fts f JOIN records r ON r.rid = f.rowid WHERE records_fts MATCH ? ORDER BY r.id`, `"`+term+`"`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var ids []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		return ids
	}
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if got := match(raw, "acct-7777"); !slices.Equal(got, []string{plain}) {
		t.Fatalf("the schema 27 index holds acct-7777 for %v, want only %s (the rewind did not take)", got, plain)
	}
	raw.Close()
	st = reopen(t, path, 27)
	want := []string{wide, arabic, plain}
	slices.Sort(want)
	if got := match(st.DB(), "acct-7777"); !slices.Equal(got, want) {
		t.Fatalf("after migration the index holds acct-7777 for %v, want %v (every spelling of ACCT-7777, not ACCT-7778)", got, want)
	}
	if got := match(st.DB(), "ａｃｃｔ"); len(got) != 0 {
		t.Fatalf("after migration the index still holds the old fullwidth term for %v", got)
	}
	expectVerify(t, serviceOver(t, st, key), "")
}
