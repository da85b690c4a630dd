package postgres_test

import (
	"errors"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/storetest"
)

// A database from before principals kept their log index is migrated at
// open: each principal is pointed at its latest entry, so it still
// authenticates and verify passes; a row the log never introduced stays
// unlinked and is refused.
func TestMigratePrincipalLogIndex(t *testing.T) {
	ctx := t.Context()
	dsn := newDatabase(t)
	st := openDSN(t, dsn)
	svc := storetest.NewService(t, st, storetest.NewClock(storetest.Start))
	_, bob, err := svc.AddPrincipal(ctx, custody.PrincipalInput{Tenant: "acme", Name: "bob", Roles: []string{"user"}})
	if err != nil {
		t.Fatal(err)
	}
	eve, eveHash := custody.NewToken()
	mustExec(t, st, `ALTER TABLE principals DROP COLUMN log_index`)
	mustExec(t, st, `DROP TABLE pauses`)
	mustExec(t, st, `DELETE FROM schema_migrations WHERE version >= 4 AND name <> 'tenant_logs'`) // principal_log_index and those after it, but for the log's own layout
	mustExec(t, st, `INSERT INTO principals (tenant, name, roles, channels, groups_, public_key, sealed_key, token_hash, created_at)
 SELECT tenant, 'eve', roles, channels, groups_, public_key, sealed_key, $1, created_at FROM principals WHERE name = 'bob'`, eveHash)

	openDSN(t, dsn) // migrates
	var linked int
	if err := st.Pool().QueryRow(ctx, `SELECT COUNT(*) FROM principals WHERE log_index IS NOT NULL`).Scan(&linked); err != nil || linked != 1 {
		t.Fatalf("%d principals linked after migration (%v); want bob alone", linked, err)
	}
	if p, err := svc.Authenticate(ctx, bob); err != nil || p.Name != "bob" {
		t.Errorf("bob after migration: %v, %v", p, err)
	}
	if _, err := svc.Authenticate(ctx, eve); !errors.Is(err, custody.ErrPrincipalUnverified) {
		t.Errorf("eve, never logged, after migration: %v; want ErrPrincipalUnverified", err)
	}
	expectVerify(t, svc, "principal acme/eve")
	mustExec(t, st, `DELETE FROM principals WHERE name = 'eve'`)
	expectVerify(t, svc, "")
}
