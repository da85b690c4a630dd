package sqlite_test

import (
	"strings"
	"testing"

	"github.com/custody-mem/custody/sqlite"
	"github.com/custody-mem/custody/storetest"
)

// Every table and column of the SQLite schema is declared covered by
// verify, or derived or ephemeral with its reason (storetest/schema_coverage.go).
// SQLite's own tables (sqlite_schema, sqlite_stat1 after an optimize)
// hold no data of custody's.
func TestSchemaCoverage(t *testing.T) {
	st := open(t).(*sqlite.Store)
	rows, err := st.DB().QueryContext(t.Context(), `SELECT m.name, p.name FROM sqlite_schema m JOIN pragma_table_info(m.name) p
 WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY m.name, p.cid`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var cols []storetest.Column
	for rows.Next() {
		var c storetest.Column
		if err := rows.Scan(&c.Table, &c.Name); err != nil {
			t.Fatal(err)
		}
		cols = append(cols, c)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	tables := map[string]bool{}
	for _, c := range cols {
		tables[c.Table] = true
	}
	// The enumeration sees the virtual tables and their shadow tables.
	for _, want := range []string{"records", "grants", "records_fts", "records_tri_data", "vectors"} {
		if !tables[want] {
			t.Fatalf("the enumeration misses table %s; it read %d tables: %s", want, len(tables), strings.Join(keys(tables), " "))
		}
	}
	storetest.CheckSchemaCoverage(t, "sqlite", cols)
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
