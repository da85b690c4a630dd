package sqlite_test

import (
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/sqlite"
	"github.com/custody-mem/custody/storetest"
	"github.com/custody-mem/custody/tlog"
)

// toSharedLog rewinds the log tables of a store of one tenant to the
// layout of schema 12 and before, one log shared by all tenants (its
// indexes are then the tenant's own): what a store written before one log
// per tenant holds.
var toSharedLog = append(slices.Clone(toSchema29Nodes),
	`ALTER TABLE log_leaves RENAME TO log_leaves_13`,
	`CREATE TABLE log_leaves (idx INTEGER PRIMARY KEY, tenant TEXT NOT NULL, data BLOB NOT NULL)`,
	`INSERT INTO log_leaves SELECT idx, tenant, data FROM log_leaves_13`,
	`DROP TABLE log_leaves_13`,
	`ALTER TABLE log_nodes RENAME TO log_nodes_13`,
	`CREATE TABLE log_nodes (seq INTEGER NOT NULL, level INTEGER NOT NULL, hash BLOB NOT NULL, PRIMARY KEY (seq, level)) WITHOUT ROWID`,
	`INSERT INTO log_nodes SELECT seq, level, hash FROM log_nodes_13`,
	`DROP TABLE log_nodes_13`,
	`ALTER TABLE checkpoints RENAME TO checkpoints_13`,
	`CREATE TABLE checkpoints (size INTEGER PRIMARY KEY, note BLOB NOT NULL)`,
	`INSERT INTO checkpoints SELECT size, note FROM checkpoints_13`,
	`DROP TABLE checkpoints_13`,
	`DROP TABLE log_legacy`,
	`DROP TABLE log_legacy_checkpoints`,
)

// A store of schema 12, whose tenants shared one log, is migrated to one
// log per tenant: each tenant's leaves, in order, become its log, every
// stored log index moves with them, and the shared log still verifies
// against the checkpoint signed of it before (the checkpoint file's, a
// pinned one); a write after the migration verifies. The twin: a store
// whose record of the shared log's order was changed fails verify, and the
// server refuses its checkpoint file.
func TestMigrateToTenantLogs(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	path := filepath.Join(dir, "c.db")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	clock := storetest.NewClock(storetest.Start)
	svc := storetest.NewService(t, st, clock)
	storetest.Workload(t, svc, clock)
	shared := storetest.SharedLogOf(t, st)
	n := len(shared.Leaves)
	pinned := shared.Checkpoint(t, svc.ServerKey(), custody.DefaultLogOrigin, n-5)
	latest := shared.Checkpoint(t, svc.ServerKey(), custody.DefaultLogOrigin, n)
	file := filepath.Join(dir, "c.db.checkpoint")
	if err := os.WriteFile(file, latest, 0o600); err != nil {
		t.Fatal(err)
	}
	toSchema12(t, st, shared, latest)
	st.Close()

	st = reopen(t, path, 12)
	var v int
	if err := st.DB().QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil || v != sqlite.SchemaVersion {
		t.Fatalf("user_version after migration = %d, %v; want %d", v, err, sqlite.SchemaVersion)
	}
	after := storetest.ServiceAfterMigration(t, st, svc.ServerKey(), clock, file)
	storetest.CheckMigrated(t, after, shared, pinned, func() {
		var p *custody.Principal
		if err := st.View(ctx, func(tx custody.Tx) error { p, err = tx.Principal(ctx, "acme-corp", "alice"); return err }); err != nil {
			t.Fatal(err)
		}
		c, err := after.Act(ctx, p, "")
		if err != nil {
			t.Fatalf("acme-corp/alice after the migration: %v", err)
		}
		if _, err := after.Remember(ctx, c, custody.Candidate{Namespace: "n", Class: custody.ClassFact, Body: "after", Channel: "user"}); err != nil {
			t.Fatal(err)
		}
	})

	// The twin: the shared log's order changed (two leaves of two tenants
	// swapped) no longer rebuilds the tree its checkpoints signed.
	a, b := shared.Leaves[0], shared.Leaves[1]
	if a.Tenant == b.Tenant {
		t.Fatal("the shared log does not interleave two tenants")
	}
	exec(t, st.DB(), `UPDATE log_legacy SET tenant = CASE idx WHEN 0 THEN ? ELSE ? END WHERE idx IN (0, 1)`, b.Tenant, a.Tenant)
	var d *custody.Difference
	if _, err := after.Verify(ctx, custody.VerifyOptions{Checkpoints: [][]byte{pinned}}); !errors.As(err, &d) || !strings.Contains(d.What, "old shared log") {
		t.Fatalf("verify with the shared log's order changed: %v; want a difference in the old shared log", err)
	}
	if _, err := after.CheckPublished(ctx); !errors.Is(err, custody.ErrRolledBack) {
		t.Fatalf("CheckPublished with the shared log's order changed: %v; want ErrRolledBack", err)
	}
}

// toSchema12 rewrites st as a store of schema 12 holds it: the shared log
// s in the old tables, with its tree nodes and checkpoint, and the records'
// and principals' log indexes (and those the receipts name) in it.
func toSchema12(t *testing.T, st *sqlite.Store, s *storetest.SharedLog, checkpoint []byte) {
	t.Helper()
	db := st.DB()
	type rec struct{ id, tenant, receipt string }
	var recs []rec
	var idx []uint64
	rows, err := db.QueryContext(t.Context(), `SELECT id, tenant, receipt, log_index FROM records`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var r rec
		var i uint64
		if err := rows.Scan(&r.id, &r.tenant, &r.receipt, &i); err != nil {
			t.Fatal(err)
		}
		recs, idx = append(recs, r), append(idx, i)
	}
	rows.Close()
	for i, r := range recs {
		exec(t, db, `UPDATE records SET log_index = ?, receipt = ? WHERE id = ?`, s.Index(r.tenant, idx[i]), s.Receipt(t, r.tenant, r.receipt), r.id)
	}
	exec(t, db, `CREATE TEMP TABLE p AS SELECT tenant, name, log_index FROM principals`)
	rows, err = db.QueryContext(t.Context(), `SELECT tenant, name, log_index FROM p`)
	if err != nil {
		t.Fatal(err)
	}
	type prin struct {
		tenant, name string
		i            uint64
	}
	var ps []prin
	for rows.Next() {
		var p prin
		if err := rows.Scan(&p.tenant, &p.name, &p.i); err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	rows.Close()
	for _, p := range ps {
		exec(t, db, `UPDATE principals SET log_index = ? WHERE tenant = ? AND name = ?`, s.Index(p.tenant, p.i), p.tenant, p.name)
	}
	for _, q := range []string{`DROP TABLE log_leaves`, `DROP TABLE IF EXISTS log_nodes`, `DROP TABLE checkpoints`, `DROP TABLE log_legacy`, `DROP TABLE log_legacy_checkpoints`,
		`CREATE TABLE log_leaves (idx INTEGER PRIMARY KEY, tenant TEXT NOT NULL, data BLOB NOT NULL)`,
		`CREATE TABLE log_nodes (seq INTEGER NOT NULL, level INTEGER NOT NULL, hash BLOB NOT NULL, PRIMARY KEY (seq, level)) WITHOUT ROWID`,
		`CREATE TABLE checkpoints (size INTEGER PRIMARY KEY, note BLOB NOT NULL)`} {
		exec(t, db, q)
	}
	hashes := make([][]byte, len(s.Leaves))
	for i, l := range s.Leaves {
		exec(t, db, `INSERT INTO log_leaves (idx, tenant, data) VALUES (?,?,?)`, l.Index, l.Tenant, l.Data)
		hashes[i] = tlog.LeafHash(l.Data)
	}
	nodes, _, err := tlog.AppendMany(t.Context(), tlog.NewMemNodes(), 0, hashes)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		exec(t, db, `INSERT INTO log_nodes (seq, level, hash) VALUES (?,?,?)`, (n.ID.Index+1)<<n.ID.Level-1, n.ID.Level, n.Hash)
	}
	exec(t, db, `INSERT INTO checkpoints (size, note) VALUES (?,?)`, len(s.Leaves), checkpoint)
	exec(t, db, `DELETE FROM meta`)
	exec(t, db, `PRAGMA user_version = 12`)
}

func exec(t *testing.T, db *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.ExecContext(t.Context(), q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}
