package sqlite_test

import (
	"strings"
	"testing"
)

// A cascade refuses an edge whose row holds another record (one outside the
// walk, or a sibling reached through its own edge too) or no record, rather
// than skip the descendant; with the edge mended it reaches every one.
func TestCascadeRefusesAnEdgeToTheWrongRow(t *testing.T) {
	for _, tc := range []struct{ name, rowOf string }{
		{"another record's row", "other"},
		{"a sibling's row", "sibling"},
		{"no row", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			st, _, svc, alice := serviceAt(t, t.TempDir())
			remember := func(body string, parents ...string) string { return derive(t, svc, alice, body, parents...) }
			recs := map[string]string{"other": remember("unrelated")}
			root := remember("root")
			child := remember("summary", root)
			recs["sibling"] = remember("another summary", root)
			if _, err := st.DB().ExecContext(ctx, `UPDATE edges SET child_rid = coalesce((SELECT rid FROM records WHERE id = ?), 999999) WHERE child = ?`,
				recs[tc.rowOf], child); err != nil {
				t.Fatal(err)
			}
			rev := reviewer(t, svc)
			_, err := svc.Quarantine(ctx, rev, root, "test")
			if err == nil || !strings.Contains(err.Error(), "run custody verify") {
				t.Fatalf("quarantine over a damaged edge = %v; want an error naming the damage", err)
			}
			for _, id := range []string{root, child, recs["sibling"], recs["other"]} {
				if _, err := svc.Get(ctx, alice, id); err != nil {
					t.Errorf("%s after the failed quarantine: %v", id, err)
				}
			}
			if _, err := st.DB().ExecContext(ctx, `UPDATE edges SET child_rid = (SELECT rid FROM records WHERE id = child)`); err != nil {
				t.Fatal(err)
			}
			got, err := svc.Quarantine(ctx, rev, root, "test")
			if err != nil || len(got) != 3 {
				t.Fatalf("quarantine with the edge mended = %v, %v; want the root and its two summaries", got, err)
			}
			if _, err := svc.Get(ctx, alice, recs["other"]); err != nil {
				t.Errorf("the unrelated record after the quarantine: %v", err)
			}
		})
	}
}
