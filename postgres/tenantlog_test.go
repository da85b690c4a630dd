package postgres_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/postgres"
	"github.com/custody-mem/custody/storetest"
	"github.com/custody-mem/custody/tlog"
)

// A database of migration 6, whose tenants shared one log, is migrated to
// one log per tenant (migration 7): each tenant's leaves, in order, become
// its log, every stored log index moves with them (the receipts' too), and
// the shared log still verifies against the checkpoint signed of it before;
// a write after the migration verifies. The twin: a database whose record
// of the shared log's order was changed fails verify, and the server
// refuses its checkpoint file.
func TestMigrateToTenantLogs(t *testing.T) {
	ctx := t.Context()
	dsn := newDatabase(t)
	st := openDSN(t, dsn)
	clock := storetest.NewClock(storetest.Start)
	svc := storetest.NewService(t, st, clock)
	storetest.Workload(t, svc, clock)
	shared := storetest.SharedLogOf(t, st)
	n := len(shared.Leaves)
	pinned := shared.Checkpoint(t, svc.ServerKey(), custody.DefaultLogOrigin, n-5)
	latest := shared.Checkpoint(t, svc.ServerKey(), custody.DefaultLogOrigin, n)
	file := filepath.Join(t.TempDir(), "custody.key.checkpoint")
	if err := os.WriteFile(file, latest, 0o600); err != nil {
		t.Fatal(err)
	}
	toMigration6(t, st, shared, latest)
	st.Close()

	st = openDSN(t, dsn) // migrates
	after := storetest.ServiceAfterMigration(t, st, svc.ServerKey(), clock, file)
	storetest.CheckMigrated(t, after, shared, pinned, func() {
		var p *custody.Principal
		var err error
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

	a, b := shared.Leaves[0], shared.Leaves[1]
	if a.Tenant == b.Tenant {
		t.Fatal("the shared log does not interleave two tenants")
	}
	mustExec(t, st, `UPDATE log_legacy SET tenant = CASE idx WHEN 0 THEN $1 ELSE $2 END WHERE idx IN (0, 1)`, b.Tenant, a.Tenant)
	var d *custody.Difference
	if _, err := after.Verify(ctx, custody.VerifyOptions{Checkpoints: [][]byte{pinned}}); !errors.As(err, &d) || !strings.Contains(d.What, "old shared log") {
		t.Fatalf("verify with the shared log's order changed: %v; want a difference in the old shared log", err)
	}
	if _, err := after.CheckPublished(ctx); !errors.Is(err, custody.ErrRolledBack) {
		t.Fatalf("CheckPublished with the shared log's order changed: %v; want ErrRolledBack", err)
	}
}

// toMigration6 rewrites st as a database of migration 6 holds it: the
// shared log s in the old tables, with its tree nodes and checkpoint, and
// the records' and principals' log indexes (and those the receipts name)
// in it.
func toMigration6(t *testing.T, st *postgres.Store, s *storetest.SharedLog, checkpoint []byte) {
	t.Helper()
	ctx := t.Context()
	rows, err := st.Pool().Query(ctx, `SELECT id, tenant, receipt, log_index FROM records`)
	if err != nil {
		t.Fatal(err)
	}
	type rec struct {
		id, tenant, receipt string
		i                   int64
	}
	var recs []rec
	for rows.Next() {
		var r rec
		if err := rows.Scan(&r.id, &r.tenant, &r.receipt, &r.i); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	rows.Close()
	for _, r := range recs {
		mustExec(t, st, `UPDATE records SET log_index = $1, receipt = $2 WHERE id = $3`, int64(s.Index(r.tenant, uint64(r.i))), s.Receipt(t, r.tenant, r.receipt), r.id)
	}
	rows, err = st.Pool().Query(ctx, `SELECT tenant, name, log_index FROM principals`)
	if err != nil {
		t.Fatal(err)
	}
	type prin struct {
		tenant, name string
		i            int64
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
		mustExec(t, st, `UPDATE principals SET log_index = $1 WHERE tenant = $2 AND name = $3`, int64(s.Index(p.tenant, uint64(p.i))), p.tenant, p.name)
	}
	for _, q := range []string{`DROP TABLE log_leaves`, `DROP TABLE log_nodes`, `DROP TABLE checkpoints`, `DROP TABLE log_legacy`,
		`DROP TABLE log_legacy_checkpoints`, `DROP TABLE meta`, `DELETE FROM schema_migrations WHERE name = 'tenant_logs'`,
		`CREATE TABLE log_leaves (idx bigint PRIMARY KEY CHECK (idx >= 0), tenant text NOT NULL, data bytea NOT NULL)`,
		`CREATE TABLE log_nodes (level integer NOT NULL, idx bigint NOT NULL, hash bytea NOT NULL, PRIMARY KEY (level, idx))`,
		`CREATE TABLE checkpoints (size bigint PRIMARY KEY, note bytea NOT NULL)`} {
		mustExec(t, st, q)
	}
	hashes := make([][]byte, len(s.Leaves))
	for i, l := range s.Leaves {
		mustExec(t, st, `INSERT INTO log_leaves (idx, tenant, data) VALUES ($1, $2, $3)`, int64(l.Index), l.Tenant, l.Data)
		hashes[i] = tlog.LeafHash(l.Data)
	}
	nodes, _, err := tlog.AppendMany(ctx, tlog.NewMemNodes(), 0, hashes)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		mustExec(t, st, `INSERT INTO log_nodes (level, idx, hash) VALUES ($1, $2, $3)`, int32(n.ID.Level), int64(n.ID.Index), n.Hash)
	}
	mustExec(t, st, `INSERT INTO checkpoints (size, note) VALUES ($1, $2)`, int64(len(s.Leaves)), checkpoint)
}
