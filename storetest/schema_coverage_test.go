package storetest

import (
	"strings"
	"testing"
)

// A table or column declared nowhere is a problem whose message says what
// to add, and so is a declaration of a column the schema lost; the
// declared columns pass (the twin).
func TestSchemaCoverageProblems(t *testing.T) {
	var cols []Column
	for _, d := range Declarations {
		if d.Backend == "postgres" || d.Columns == "*" {
			continue
		}
		for _, c := range strings.Fields(d.Columns) {
			cols = append(cols, Column{d.Table, c})
		}
	}
	for _, d := range Declarations {
		if d.Backend == "sqlite" && d.Columns == "*" {
			cols = append(cols, Column{d.Table, "block"})
		}
	}
	if p := SchemaCoverageProblems("sqlite", cols); len(p) != 0 {
		t.Fatalf("the declared columns: %q, want no problem", p)
	}
	p := SchemaCoverageProblems("sqlite", append(cols, Column{"approvals", "granted_by"}))
	if len(p) != 1 || !strings.Contains(p[0], "approvals.granted_by (sqlite) is declared nowhere") ||
		!strings.Contains(p[0], `{Table: "approvals", Columns: "granted_by", Backend: "sqlite", Verify: `) || !strings.Contains(p[0], "Derived: ") {
		t.Errorf("a new table: %q, want one problem saying what to add", p)
	}
	p = SchemaCoverageProblems("sqlite", cols[1:])
	if len(p) != 1 || !strings.Contains(p[0], cols[0].Table+"."+cols[0].Name+" is declared") || !strings.Contains(p[0], "no such column") {
		t.Errorf("a column gone: %q, want one problem naming %s.%s", p, cols[0].Table, cols[0].Name)
	}
}
