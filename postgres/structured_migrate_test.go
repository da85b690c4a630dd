package postgres_test

import (
	"testing"
)

// A database from before migration 016 holds in a JSON body's search
// vector the terms of its keys; the migration writes the vectors of
// those records anew from their values (lexical.Values), and leaves a
// prose record's as it was.
func TestMigrateStructuredValues(t *testing.T) {
	ctx := t.Context()
	m := newMigration(t)
	dsn, service, st, fact := m.dsn, m.service, m.st, m.fact
	doc := fact(`{"content": "quarterly figures", "kind": "report"}`)
	prose := fact("what kind of report is due")
	count := func(word string) (n int) {
		t.Helper()
		if err := st.Pool().QueryRow(ctx, `SELECT COUNT(*) FROM records WHERE search @@ $1::tsquery`, word).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	mustExec(t, st, `UPDATE records SET search = 'content:1 quarter:2 figur:3 kind:4 report:5'::tsvector WHERE id = '`+doc+`'`)
	mustExec(t, st, `DELETE FROM schema_migrations WHERE version >= 16`)
	if n := count("kind"); n != 2 {
		t.Fatalf("the rewound vectors hold kind in %d records, want 2 (%s by its key, %s)", n, doc, prose)
	}
	st = openDSN(t, dsn) // migrates
	if n := count("kind"); n != 1 {
		t.Errorf("after migration 016 kind is in %d search vectors, want 1 (the prose %s)", n, prose)
	}
	if n := count("quarter"); n != 1 {
		t.Errorf("after migration 016 quarter is in %d search vectors, want 1 (%s by its value)", n, doc)
	}
	expectVerify(t, service(st), "")
}
