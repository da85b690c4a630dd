package sqlite_test

import (
	"path/filepath"
	"testing"

	custody "github.com/custody-mem/custody"
)

// A schema 28 database, with its heads in records_head and
// records_ns_key without them, opens at schema 29 with the flag in
// records_ns_key and records_head gone; every key keeps its one head, and
// later writes, quarantines and releases move it.
func TestMigrateHeadIntoKeyIndexToSchema29(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	path := filepath.Join(dir, "c.db")
	st, key, svc, alice := serviceAt(t, dir)
	p := alice.Principal
	blue := colours(t, svc, alice, "blue")
	green := colours(t, svc, alice, "green")
	st.Close()
	rewind(t, path, `DROP INDEX records_ns_key`,
		`CREATE INDEX records_ns_key ON records (tenant, namespace, key, owner, version) WHERE key != ''`,
		`CREATE INDEX records_head ON records (tenant, owner, namespace, key) WHERE head = 1`,
		`PRAGMA user_version = 28`)

	st = reopen(t, path, 28)
	var v, heads, cols int
	if err := st.DB().QueryRowContext(ctx, `SELECT (SELECT user_version FROM pragma_user_version),
 (SELECT COUNT(*) FROM sqlite_schema WHERE name = 'records_head'),
 (SELECT COUNT(*) FROM pragma_index_info('records_ns_key'))`).Scan(&v, &heads, &cols); err != nil {
		t.Fatal(err)
	}
	if heads != 0 || cols != 6 {
		t.Errorf("after migration: records_head %d (want 0), records_ns_key of %d columns (want 6, head last)", heads, cols)
	}
	svc = serviceOver(t, st, key)
	alice, _ = svc.Act(ctx, p, "")
	current := func(want string) {
		t.Helper()
		page, err := svc.List(ctx, alice, custody.ListInput{Namespace: "prefs", Key: "colour"})
		if err != nil || len(page.Items) != 1 || page.Items[0].ID != want {
			t.Fatalf("list by key = %+v, %v; want only %s", page, err, want)
		}
		if _, err := svc.Verify(ctx, custody.VerifyOptions{}); err != nil {
			t.Fatalf("verify: %v", err)
		}
	}
	current(green)
	red := colours(t, svc, alice, "red")
	current(red)
	if _, err := svc.Get(ctx, alice, green); err == nil {
		t.Error("a superseded version is retrievable after a write at schema 29")
	}
	// Quarantining the head gives the flag back to the version below it;
	// approving it takes it back.
	rev := reviewer(t, svc)
	if _, err := svc.Quarantine(ctx, rev, red, "test"); err != nil {
		t.Fatal(err)
	}
	current(green)
	if _, err := svc.Quarantine(ctx, rev, green, "test"); err != nil {
		t.Fatal(err)
	}
	current(blue)
	if _, err := svc.Approve(ctx, rev, red); err != nil {
		t.Fatal(err)
	}
	current(red)
}
