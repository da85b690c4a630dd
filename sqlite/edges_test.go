package sqlite_test

import (
	"strings"
	"testing"
)

// An edge whose row holds another record (a damaged file) fails the
// cascade instead of skipping the descendant, and changes nothing; with
// the edge mended, the same quarantine reaches it.
func TestCascadeRefusesAnEdgeToTheWrongRow(t *testing.T) {
	ctx := t.Context()
	st, _, svc, alice := serviceAt(t, t.TempDir())
	remember := func(body string, parents ...string) string { return derive(t, svc, alice, body, parents...) }
	other := remember("unrelated")
	root := remember("root")
	child := remember("summary", root)
	if _, err := st.DB().ExecContext(ctx, `UPDATE edges SET child_rid = (SELECT rid FROM records WHERE id = ?) WHERE child = ?`, other, child); err != nil {
		t.Fatal(err)
	}
	rev := reviewer(t, svc)
	_, err := svc.Quarantine(ctx, rev, root, "test")
	if err == nil || !strings.Contains(err.Error(), "run custody verify") {
		t.Fatalf("quarantine over a damaged edge = %v; want an error naming the damage", err)
	}
	for _, id := range []string{root, child, other} {
		if _, err := svc.Get(ctx, alice, id); err != nil {
			t.Errorf("%s after the failed quarantine: %v", id, err)
		}
	}
	if _, err := st.DB().ExecContext(ctx, `UPDATE edges SET child_rid = (SELECT rid FROM records WHERE id = child)`); err != nil {
		t.Fatal(err)
	}
	got, err := svc.Quarantine(ctx, rev, root, "test")
	if err != nil || len(got) != 2 {
		t.Fatalf("quarantine with the edge mended = %v, %v; want the root and its summary", got, err)
	}
	if _, err := svc.Get(ctx, alice, other); err != nil {
		t.Errorf("the unrelated record after the quarantine: %v", err)
	}
}
