package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/sqlite"
	"github.com/custody-mem/custody/tlog"
)

// serviceAt opens a store at dir/c.db with a service over it and a user
// principal alice of tenant acme acting for herself.
func serviceAt(t *testing.T, dir string) (*sqlite.Store, *tlog.ServerKey, *custody.Service, *custody.Caller) {
	t.Helper()
	return serviceOn(t, dir, sqlite.Open)
}

// serviceOn is serviceAt with a store opened by open.
func serviceOn(t *testing.T, dir string, open func(context.Context, string) (*sqlite.Store, error)) (*sqlite.Store, *tlog.ServerKey, *custody.Service, *custody.Caller) {
	t.Helper()
	st, err := open(t.Context(), filepath.Join(dir, "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	key, _, err := tlog.LoadOrCreateServerKey(filepath.Join(dir, "server.key"))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := custody.New(st, key, custody.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return st, key, svc, actAs(t, svc, "alice", "user")
}

// reviewer adds acme/rev, a reviewer, and acts as it.
func reviewer(t *testing.T, svc *custody.Service) *custody.Caller {
	t.Helper()
	return actAs(t, svc, "rev", "reviewer")
}

// actAs adds the principal acme/name with role and acts as it, for itself.
func actAs(t *testing.T, svc *custody.Service, name, role string) *custody.Caller {
	t.Helper()
	p, _, err := svc.AddPrincipal(t.Context(), custody.PrincipalInput{Tenant: "acme", Name: name, Roles: []string{role}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := svc.Act(t.Context(), p, "")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// derive has c remember an episode with body, derived from parents with
// weight 1, and returns its id; it must be admitted.
func derive(t *testing.T, svc *custody.Service, c *custody.Caller, body string, parents ...string) string {
	t.Helper()
	in := custody.Candidate{Namespace: "notes", Class: custody.ClassEpisode, Body: body, Channel: "user"}
	for _, id := range parents {
		in.DerivedFrom = append(in.DerivedFrom, custody.Edge{ID: id, Weight: 1})
	}
	d, err := svc.Remember(t.Context(), c, in)
	if err != nil || d.State != custody.StateAdmitted {
		t.Fatalf("remember %s = %+v, %v", body, d, err)
	}
	return d.ID
}

// rewind runs stmts on the closed database at path, as a file at rest, to
// take it back to an older schema.
// nodesOfLeaves reads the tree nodes kept in the leaves' rows (schema 30)
// as rows of (tenant, seq, level, hash), as log_nodes held them before.
const nodesOfLeaves = `WITH RECURSIVE lv(level) AS (SELECT 0 UNION ALL SELECT level + 1 FROM lv WHERE level < 63)
 SELECT l.tenant AS tenant, l.idx AS seq, lv.level AS level, substr(l.nodes, lv.level * 32 + 1, 32) AS hash
 FROM log_leaves l JOIN lv ON length(l.nodes) >= (lv.level + 1) * 32`

// toSchema29Nodes rewinds the tree nodes to the layout of schemas 6 to
// 29: a table of their own, log_nodes.
var toSchema29Nodes = []string{
	`CREATE TABLE log_nodes (tenant TEXT NOT NULL, seq INTEGER NOT NULL, level INTEGER NOT NULL, hash BLOB NOT NULL, PRIMARY KEY (tenant, seq, level)) WITHOUT ROWID`,
	`INSERT INTO log_nodes (tenant, seq, level, hash) ` + nodesOfLeaves,
	`ALTER TABLE log_leaves DROP COLUMN nodes`,
}

func rewind(t *testing.T, path string, stmts ...string) {
	t.Helper()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, q := range stmts {
		if _, err := raw.ExecContext(t.Context(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// reopen opens the database at path, of schema from, which migrates it.
func reopen(t *testing.T, path string, from int) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatalf("opening a schema %d database: %v", from, err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// serviceOver is a service over st with the server key.
func serviceOver(t *testing.T, st *sqlite.Store, key *tlog.ServerKey) *custody.Service {
	t.Helper()
	svc, err := custody.New(st, key, custody.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// colours has c write the preference prefs/colour once per body and
// returns the last version's id.
func colours(t *testing.T, svc *custody.Service, c *custody.Caller, bodies ...string) string {
	t.Helper()
	var last string
	for _, body := range bodies {
		d, err := svc.Remember(t.Context(), c, custody.Candidate{Namespace: "prefs", Key: "colour", Class: custody.ClassPreference, Body: body, Channel: "user"})
		if err != nil || d.State != custody.StateAdmitted {
			t.Fatalf("remember colour %s = %+v, %v", body, d, err)
		}
		last = d.ID
	}
	return last
}

// indexAll moves a closed database's pending records into both indexes
// and drops index_pending, as schemas 1 and 2 indexed every write at once.
var indexAll = []string{
	`INSERT INTO records_fts (rowid, body, key) SELECT p.rid, r.body, r.key FROM index_pending p JOIN records r ON r.rid = p.rid`,
	`INSERT INTO records_tri (rowid, norm) SELECT rid, norm FROM index_pending`, `DROP TABLE index_pending`}

// toSchema4 takes a closed database back to schema 4, which indexed every
// write for search at once and kept only its trigrams pending, in
// tri_pending.
var toSchema4 = []string{
	`INSERT INTO records_fts (rowid, body, key) SELECT p.rid, r.body, r.key FROM index_pending p JOIN records r ON r.rid = p.rid`,
	`ALTER TABLE index_pending RENAME TO tri_pending`, `PRAGMA user_version = 4`}

// A schema 1 database (no head column, no user_version) is migrated at
// open, and retrieval then returns the same newest versions as before.
func TestMigrateFromSchema1(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	path := filepath.Join(dir, "c.db")
	st, key, svc, alice := serviceAt(t, dir)
	p := alice.Principal
	var ids []string
	for _, body := range []string{"blue", "green"} {
		d, err := svc.Remember(ctx, alice, custody.Candidate{Namespace: "prefs", Key: "colour", Class: custody.ClassPreference, Body: body, Channel: "user"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, d.ID)
	}
	st.Close()
	rewind(t, path, `DROP TRIGGER records_search_moved`, `DROP TABLE search_moved`, `DROP TRIGGER records_head_insert`, `DROP TRIGGER records_head_state`,
		`DROP INDEX records_ns_key`, `ALTER TABLE records DROP COLUMN head`, `PRAGMA user_version = 0`,
		`CREATE INDEX records_key ON records (tenant, owner, namespace, key, version)`,
		`DROP INDEX records_waiting`, `DROP INDEX records_owner_id`, `DROP INDEX records_aud_id`,
		`CREATE INDEX records_state ON records (state, tenant, id)`,
		`CREATE INDEX records_owner ON records (tenant, owner, state, id)`, `CREATE INDEX records_aud ON records (tenant, audience, state, id)`,
		// Schema 1 had no edges_child and no pending rows: it indexed at once.
		`DROP INDEX edges_child`, indexAll[0], indexAll[1], indexAll[2], `ALTER TABLE edges DROP COLUMN child_rid`)

	st = reopen(t, path, 1)
	var v int
	if err := st.DB().QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil || v != sqlite.SchemaVersion {
		t.Fatalf("user_version after migration = %d, %v; want %d", v, err, sqlite.SchemaVersion)
	}
	var old int
	if err := st.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_schema WHERE name IN ('records_owner', 'records_aud', 'records_key', 'records_state')`).Scan(&old); err != nil || old != 0 {
		t.Errorf("%d of schema 1's replaced indexes remain after migration (%v)", old, err)
	}
	var fresh int
	if err := st.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_schema WHERE name IN ('records_ns_key', 'records_waiting', 'records_owner_id', 'records_aud_id')`).Scan(&fresh); err != nil || fresh != 4 {
		t.Errorf("%d of the 4 indexes that replaced schema 1's after migration (%v)", fresh, err)
	}
	svc = serviceOver(t, st, key)
	alice, _ = svc.Act(ctx, p, "")
	page, err := svc.List(ctx, alice, custody.ListInput{Namespace: "prefs", Key: "colour"})
	if err != nil || len(page.Items) != 1 || page.Items[0].ID != ids[1] {
		t.Fatalf("list after migration = %+v, %v; want only the newest version %s", page, err, ids[1])
	}
	if _, err := svc.Get(ctx, alice, ids[0]); err == nil {
		t.Error("the superseded version is retrievable after migration")
	}
	if _, err := svc.Verify(ctx, custody.VerifyOptions{}); err != nil {
		t.Errorf("verify after migration: %v", err)
	}
	// Writes after the migration keep the flag.
	d, err := svc.Remember(ctx, alice, custody.Candidate{Namespace: "prefs", Key: "colour", Class: custody.ClassPreference, Body: "red", Channel: "user"})
	if err != nil {
		t.Fatal(err)
	}
	page, err = svc.List(ctx, alice, custody.ListInput{Namespace: "prefs", Key: "colour"})
	if err != nil || len(page.Items) != 1 || page.Items[0].ID != d.ID {
		t.Fatalf("list after a new version = %+v, %v; want %s", page, err, d.ID)
	}
}

// A database of a newer schema is refused with a message saying so.
func TestOpenRefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	st, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.DB().ExecContext(t.Context(), `PRAGMA user_version = 99`); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if st, err := sqlite.Open(t.Context(), path); err == nil {
		st.Close()
		t.Fatal("opened a database of schema 99")
	} else if want := "upgrade custody"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
}

// A schema 2 database gains index_pending, and records_waiting is rebuilt
// with its condition spelled without IN; the review queue still reads it.
func TestMigrateFromSchema2(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	path := filepath.Join(dir, "c.db")
	st, key, svc, _ := serviceAt(t, dir)
	h, _, err := svc.AddPrincipal(ctx, custody.PrincipalInput{Tenant: "acme", Name: "harness", Roles: []string{"agent"}, Channels: []string{"tool:email"}})
	if err != nil {
		t.Fatal(err)
	}
	harness, err := svc.Act(ctx, h, "alice")
	if err != nil {
		t.Fatal(err)
	}
	q, err := svc.Remember(ctx, harness, custody.Candidate{Namespace: "bank", Key: "payee", Class: custody.ClassFact, Body: "ACCT-7777", Channel: "tool:email"})
	if err != nil || q.State != custody.StateQuarantined {
		t.Fatalf("email write = %+v, %v; want quarantined", q, err)
	}
	st.Close()
	rewind(t, path, indexAll[0], indexAll[1], indexAll[2], `DROP INDEX records_waiting`,
		`CREATE INDEX records_waiting ON records (state, tenant, id) WHERE state IN ('pending', 'quarantined', 'pending_confirmation')`,
		`ALTER TABLE edges DROP COLUMN child_rid`, `PRAGMA user_version = 2`)

	st = reopen(t, path, 2)
	svc = serviceOver(t, st, key)
	var def string
	if err := st.DB().QueryRowContext(ctx, `SELECT sql FROM sqlite_schema WHERE name = 'records_waiting'`).Scan(&def); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(def, " IN (") {
		t.Errorf("records_waiting after migration: %s", def)
	}
	var pending int
	if err := st.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM index_pending`).Scan(&pending); err != nil {
		t.Errorf("index_pending after migration: %v", err)
	}
	rev := reviewer(t, svc)
	items, _, err := svc.ReviewQueue(ctx, rev, "", 10)
	if err != nil || len(items) != 1 || items[0].Record.ID != q.ID {
		t.Fatalf("review queue after migration = %+v, %v; want %s", items, err, q.ID)
	}
	// The gate still finds the value indexed before the migration.
	err = st.View(ctx, func(tx custody.Tx) error {
		recs, err := tx.Mentioning(ctx, custody.Scope{Tenant: "acme", Subject: "alice"}, custody.MentionQuery{Text: "acct7777"})
		if err != nil || len(recs) != 1 || recs[0].ID != q.ID {
			t.Errorf("mentioning after migration = %d records, %v; want %s", len(recs), err, q.ID)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A schema 3 database's edges gain the rows of their children, and a
// cascade through edges written before the migration still reaches every
// descendant, while one written after it does too.
func TestMigrateFromSchema3(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	path := filepath.Join(dir, "c.db")
	st, key, svc, alice := serviceAt(t, dir)
	p := alice.Principal
	// Older records first, so that rows and ids do not simply coincide.
	other := derive(t, svc, alice, "unrelated")
	root := derive(t, svc, alice, "root")
	a := derive(t, svc, alice, "summary a", root)
	b := derive(t, svc, alice, "summary b", root, other)
	c := derive(t, svc, alice, "digest of a and b", a, b)
	st.Close()
	rewind(t, path, append(toSchema4, `ALTER TABLE edges DROP COLUMN child_rid`, `PRAGMA user_version = 3`)...)

	st = reopen(t, path, 3)
	var unset int
	if err := st.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM edges e LEFT JOIN records r ON r.rid = e.child_rid
 WHERE r.id IS NOT e.child`).Scan(&unset); err != nil || unset != 0 {
		t.Fatalf("%d edges name no row or another record's after migration (%v)", unset, err)
	}
	svc = serviceOver(t, st, key)
	alice, _ = svc.Act(ctx, p, "")
	d := derive(t, svc, alice, "written after the migration", c)
	rev := reviewer(t, svc)
	got, err := svc.Quarantine(ctx, rev, root, "test")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	want := []string{root, a, b, c, d}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("quarantine affected %v; want %v", got, want)
	}
	if _, err := svc.Get(ctx, alice, other); err != nil {
		t.Errorf("the unrelated parent of b: %v", err)
	}
}

// A schema 4 database's pending trigrams (of records already in the search
// index) move into the trigram index, and tri_pending goes: search and
// the gate find the records written before the migration, once each, and
// a record written after it, and verify passes.
func TestMigrateFromSchema4(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	path := filepath.Join(dir, "c.db")
	st, key, svc, alice := serviceOn(t, dir, sqlite.OpenUntidied)
	p := alice.Principal
	indexed := derive(t, svc, alice, "indexed payee ACCT-1042")
	if err := st.Tidy(ctx); err != nil {
		t.Fatal(err)
	}
	waiting := derive(t, svc, alice, "waiting payee ACCT-1043")
	st.Close()
	rewind(t, path, toSchema4...)
	var n int
	rewindCheck, _ := sql.Open("sqlite", path)
	if err := rewindCheck.QueryRowContext(ctx, `SELECT COUNT(*) FROM tri_pending`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("the schema 4 database holds %d pending trigram rows (%v); want the one of %s", n, err, waiting)
	}
	rewindCheck.Close()

	st = reopen(t, path, 4)
	if err := st.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_schema WHERE name = 'tri_pending'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("tri_pending after migration: %d (%v)", n, err)
	}
	svc = serviceOver(t, st, key)
	alice, _ = svc.Act(ctx, p, "")
	after := derive(t, svc, alice, "after payee ACCT-1044")
	hits, err := svc.Search(ctx, alice, custody.SearchInput{Query: "payee", Limit: 10})
	var found []string
	for _, h := range hits {
		found = append(found, h.Record.ID)
	}
	slices.Sort(found)
	want := []string{indexed, waiting, after}
	slices.Sort(want)
	if err != nil || !slices.Equal(found, want) {
		t.Errorf("search after migration = %v, %v; want %v", found, err, want)
	}
	for v, id := range map[string]string{"acct1042": indexed, "acct1043": waiting, "acct1044": after} {
		err := st.View(ctx, func(tx custody.Tx) error {
			recs, err := tx.Mentioning(ctx, custody.Scope{Tenant: "acme", Subject: "alice"}, custody.MentionQuery{Text: v})
			if err != nil || len(recs) != 1 || recs[0].ID != id {
				t.Errorf("mentioning %s after migration = %d records, %v; want %s", v, len(recs), err, id)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := svc.Verify(ctx, custody.VerifyOptions{}); err != nil {
		t.Errorf("verify after migration: %v", err)
	}
}

// A schema 5 database's tree nodes are kept under the append that
// completed each, the same nodes with the same hashes; verify passes, and
// a write after the migration appends to the same tree.
func TestMigrateFromSchema5(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	path := filepath.Join(dir, "c.db")
	st, key, svc, alice := serviceAt(t, dir)
	p := alice.Principal
	for i := range 11 { // eleven writes and the principal's entry: nodes up to level 3
		derive(t, svc, alice, fmt.Sprintf("note %d", i))
	}
	before := storedNodes(t, st.DB(), `SELECT level, ((seq + 1) >> level) - 1, hash FROM (`+nodesOfLeaves+`)`)
	st.Close()
	rewind(t, path, toSharedLog...)
	rewind(t, path, `ALTER TABLE log_nodes RENAME TO log_nodes_6`,
		`CREATE TABLE log_nodes (level INTEGER NOT NULL, idx INTEGER NOT NULL, hash BLOB NOT NULL, PRIMARY KEY (level, idx)) WITHOUT ROWID`,
		`INSERT INTO log_nodes SELECT level, ((seq + 1) >> level) - 1, hash FROM log_nodes_6`, `DROP TABLE log_nodes_6`, `PRAGMA user_version = 5`)

	st = reopen(t, path, 5)
	if after := storedNodes(t, st.DB(), `SELECT level, ((seq + 1) >> level) - 1, hash FROM (`+nodesOfLeaves+`)`); len(before) < 20 || !slices.Equal(after, before) {
		t.Fatalf("tree nodes after migration:\n%v\nwant the %d before it:\n%v", after, len(before), before)
	}
	svc = serviceOver(t, st, key)
	if _, err := svc.Verify(ctx, custody.VerifyOptions{}); err != nil {
		t.Fatalf("verify after migration: %v", err)
	}
	alice, _ = svc.Act(ctx, p, "")
	derive(t, svc, alice, "written after the migration")
	if _, err := svc.Verify(ctx, custody.VerifyOptions{}); err != nil {
		t.Errorf("verify after a write: %v", err)
	}
}

// A schema 6 database's audience index, which held every record, is built
// again without the owner-only ones; a list still finds the records shared
// with the tenant, and only those, for a user who owns none of them.
func TestMigrateFromSchema6(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	path := filepath.Join(dir, "c.db")
	st, key, svc, alice := serviceAt(t, dir)
	bob := actAs(t, svc, "bob", "user")
	shared, err := svc.Remember(ctx, alice, custody.Candidate{Namespace: "n", Class: custody.ClassFact, Body: "shared", Channel: "user", Audience: "tenant"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Approve(ctx, reviewer(t, svc), shared.ID); err != nil { // sharing with the tenant is reviewed
		t.Fatal(err)
	}
	derive(t, svc, alice, "alice's own")
	st.Close()
	rewind(t, path, `DROP INDEX records_aud_id`, `CREATE INDEX records_aud_id ON records (tenant, audience, id)`, `PRAGMA user_version = 6`)

	st = reopen(t, path, 6)
	var def string
	var n int
	if err := st.DB().QueryRowContext(ctx, `SELECT sql FROM sqlite_schema WHERE name = 'records_aud_id'`).Scan(&def); err != nil || !strings.Contains(def, "WHERE audience != 'owner'") {
		t.Errorf("records_aud_id after migration: %s (%v)", def, err)
	}
	if err := st.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM records INDEXED BY records_aud_id WHERE tenant = 'acme' AND audience != 'owner'`).Scan(&n); err != nil || n != 1 {
		t.Errorf("records_aud_id holds %d records (%v); want the shared one", n, err)
	}
	svc = serviceOver(t, st, key)
	bob, _ = svc.Act(ctx, bob.Principal, "")
	page, err := svc.List(ctx, bob, custody.ListInput{})
	if err != nil || len(page.Items) != 1 || page.Items[0].ID != shared.ID {
		t.Errorf("bob's list after migration = %+v, %v; want only %s", page, err, shared.ID)
	}
}

// A schema 7 database's key index, which held every record, is built again
// with the keyed ones only; a key's versions are still found through it.
func TestMigrateFromSchema7(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	path := filepath.Join(dir, "c.db")
	st, key, svc, alice := serviceAt(t, dir)
	last := colours(t, svc, alice, "blue", "green")
	derive(t, svc, alice, "a keyless note")
	st.Close()
	rewind(t, path, `DROP INDEX records_ns_key`, `CREATE INDEX records_ns_key ON records (tenant, namespace, key, owner, version)`, `PRAGMA user_version = 7`)

	st = reopen(t, path, 7)
	var n int
	if err := st.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM records INDEXED BY records_ns_key WHERE tenant = 'acme' AND key != ''`).Scan(&n); err != nil || n != 2 {
		t.Errorf("records_ns_key holds %d records (%v); want the two versions of the key", n, err)
	}
	svc = serviceOver(t, st, key)
	alice, _ = svc.Act(ctx, alice.Principal, "")
	if vs, err := svc.History(ctx, alice, last); err != nil || len(vs) != 2 {
		t.Errorf("history of the key after migration = %d versions, %v; want 2", len(vs), err)
	}
	d, err := svc.Remember(ctx, alice, custody.Candidate{Namespace: "prefs", Key: "colour", Class: custody.ClassPreference, Body: "red", Channel: "user"})
	if err != nil || d.Record.Version != 3 {
		t.Errorf("a third version after migration = %+v, %v; want version 3", d, err)
	}
}
