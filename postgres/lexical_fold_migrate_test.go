package postgres_test

import (
	"testing"
)

// A database from before migration 021 holds in a record's search vector
// the terms of its text only lower-cased; the migration writes every
// vector anew from the folded text: a fullwidth ACCT-7777 and one with
// Arabic-Indic digits hold the identifier acct-7777 afterwards, as the
// record written in ASCII does, and the twin ACCT-7778 does not.
func TestMigrateLexicalFold(t *testing.T) {
	ctx := t.Context()
	m := newMigration(t)
	dsn, service, st, fact := m.dsn, m.service, m.st, m.fact
	wide := fact("savings ＡＣＣＴ－７７７７")
	arabic := fact("savings ACCT-٧٧٧٧")
	fact("savings ACCT-7777")
	fact("checking ACCT-7778")
	count := func(term string) (n int) {
		t.Helper()
		if err := st.Pool().QueryRow(ctx, `SELECT COUNT(*) FROM records WHERE search @@ quote_literal($1)::tsquery`, term).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// The vectors as before migration 021 wrote them.
	mustExec(t, st, `UPDATE records SET search = $$'save':1 'ａｃｃｔ':2 '７７７７':3$$::tsvector WHERE id = '`+wide+`'`)
	mustExec(t, st, `UPDATE records SET search = $$'save':1 'acct-٧٧٧٧':2 'acct':3 '٧٧٧٧':4$$::tsvector WHERE id = '`+arabic+`'`)
	mustExec(t, st, `DELETE FROM schema_migrations WHERE version >= 21`)
	if n := count("acct-7777"); n != 1 {
		t.Fatalf("the rewound vectors hold acct-7777 in %d records, want 1 (the ASCII one)", n)
	}
	st = openDSN(t, dsn) // migrates
	if n := count("acct-7777"); n != 3 {
		t.Errorf("after migration 021 acct-7777 is in %d search vectors, want 3 (every spelling of ACCT-7777, not ACCT-7778)", n)
	}
	if n := count("ａｃｃｔ"); n != 0 {
		t.Errorf("after migration 021 the old fullwidth term is in %d search vectors, want 0", n)
	}
	expectVerify(t, service(st), "")
}
