package sqlite_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
)

// A schema 17 database, without records_episodes, gains the index at
// open, and Following walks it: the episode after a matching one is
// found in the index, not by reading the owner's every later record.
func TestMigrateEpisodeIndexToSchema20(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	path := filepath.Join(dir, "c.db")
	st, _, svc, alice := serviceAt(t, dir)
	var ids []string
	for _, b := range []string{"the parcel arrived", "which colour is it?"} {
		d, err := svc.Remember(ctx, alice, custody.Candidate{Namespace: "chat", Class: custody.ClassEpisode, Body: b, Channel: "user"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, d.ID)
	}
	st.Close()
	rewind(t, path, `DROP INDEX records_episodes`, `PRAGMA user_version = 17`)
	st = reopen(t, path, 17)
	var n int
	if err := st.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = 'records_episodes'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("records_episodes after migration: %d, %v; want it built", n, err)
	}
	var detail string
	var a, b, c int
	if err := st.DB().QueryRowContext(ctx, `EXPLAIN QUERY PLAN SELECT r.id FROM records r WHERE r.tenant = ? AND r.owner = ? AND r.namespace = ? AND r.class = 'episode' AND r.id > ? ORDER BY r.id LIMIT 1`,
		alice.Tenant(), alice.Subject.Name, "chat", ids[0]).Scan(&a, &b, &c, &detail); err != nil {
		t.Fatal(err)
	}
	if want := "records_episodes"; !strings.Contains(detail, want) {
		t.Errorf("the walk's plan is %q, want it by %s", detail, want)
	}
	scope := custody.Scope{Tenant: alice.Tenant(), Subject: alice.Subject.Name, Now: time.Now()}
	next, err := st.Following(ctx, scope, custody.SearchQuery{Limit: 10}, ids[:1])
	if err != nil || next[ids[0]] != ids[1] {
		t.Errorf("Following(%s) = %v, %v; want %s", ids[0], next, err, ids[1])
	}
}
