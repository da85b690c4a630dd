package postgres_test

import (
	"testing"

	"github.com/custody-mem/custody/postgres"
	"github.com/custody-mem/custody/storetest"
)

// Every table and column of a migrated PostgreSQL database is declared
// covered by verify, or derived or ephemeral with its reason
// (storetest/schema_coverage.go).
func TestSchemaCoverage(t *testing.T) {
	st := open(t).(*postgres.Store)
	rows, err := st.Pool().Query(t.Context(), `SELECT table_name, column_name FROM information_schema.columns
 WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var cols []storetest.Column
	tables := map[string]bool{}
	for rows.Next() {
		var c storetest.Column
		if err := rows.Scan(&c.Table, &c.Name); err != nil {
			t.Fatal(err)
		}
		cols = append(cols, c)
		tables[c.Table] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"records", "grants", "vectors", "schema_migrations"} {
		if !tables[want] {
			t.Fatalf("the enumeration misses table %s; it read %d tables", want, len(tables))
		}
	}
	storetest.CheckSchemaCoverage(t, "postgres", cols)
}
