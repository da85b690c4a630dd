package postgres_test

import (
	"crypto/sha256"
	"path/filepath"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/storetest"
	"github.com/custody-mem/custody/tlog"
)

// Verify still proves a salted body unchanged: an edited body, a replaced
// salt and a removed salt (posing as a record older than salts) are each a
// difference, and the record as written passes again.
func TestVerifyCatchesBodyAndSaltEdits(t *testing.T) {
	st, svc, alice := verifyStore(t)
	id := remember(t, svc, alice, "1234")
	var salt []byte
	if err := st.Pool().QueryRow(t.Context(), `SELECT salt FROM records WHERE id = $1`, id).Scan(&salt); err != nil || len(salt) != custody.SaltSize {
		t.Fatalf("stored salt %x, %v", salt, err)
	}
	expectVerify(t, svc, "")
	mustExec(t, st, `UPDATE records SET body = '1235' WHERE id = $1`, id)
	expectVerify(t, svc, "body or its salt")
	mustExec(t, st, `UPDATE records SET body = '1234' WHERE id = $1`, id)
	expectVerify(t, svc, "")
	mustExec(t, st, `UPDATE records SET salt = sha256(salt) WHERE id = $1`, id)
	expectVerify(t, svc, "body or its salt")
	mustExec(t, st, `UPDATE records SET salt = ''::bytea WHERE id = $1`, id)
	expectVerify(t, svc, "body or its salt")
	mustExec(t, st, `UPDATE records SET salt = $1 WHERE id = $2`, salt, id)
	expectVerify(t, svc, "")

	rev := actAs(t, svc, "rev", "reviewer")
	if _, err := svc.Retire(t.Context(), rev, id, "", true); err != nil {
		t.Fatal(err)
	}
	expectVerify(t, svc, "")
	mustExec(t, st, `UPDATE records SET salt = $1 WHERE id = $2`, salt, id)
	expectVerify(t, svc, "erased but still holds a body or its salt")
}

// A database from before migration 003, whose records have no salt and
// whose log commits to bodies by plain SHA-256, gains the salt column at
// open and verifies; an edit of an old record is still caught, one can be
// erased, and new records are salted beside them.
func TestMigrateToRecordSalts(t *testing.T) {
	ctx := t.Context()
	key, _, err := tlog.LoadOrCreateServerKey(filepath.Join(t.TempDir(), "server.key"))
	if err != nil {
		t.Fatal(err)
	}
	service := func(st custody.Store) *custody.Service {
		svc, err := custody.New(st, key, custody.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return svc
	}
	src := openDSN(t, newDatabase(t))
	svc := service(src)
	alice := userOf(t, svc)
	pin := remember(t, svc, alice, "1234")
	remember(t, svc, alice, "from the pin", pin)
	actAs(t, svc, "rev", "reviewer")

	dsn := newDatabase(t)
	old := openDSN(t, dsn)
	storetest.CopyUnsalted(t, key, src, old)
	mustExec(t, old, `ALTER TABLE records DROP COLUMN salt`)
	mustExec(t, old, `ALTER TABLE principals DROP COLUMN log_index`)
	mustExec(t, old, `DELETE FROM schema_migrations WHERE version >= 3 AND name <> 'tenant_logs'`)
	old.Close()

	st := openDSN(t, dsn)
	var logged []byte
	var idx int64
	if err := st.Pool().QueryRow(ctx, `SELECT log_index FROM records WHERE id = $1`, pin).Scan(&idx); err != nil {
		t.Fatal(err)
	}
	ls, err := st.Leaves(ctx, "acme", uint64(idx), uint64(idx)+1)
	if err != nil || len(ls) != 1 {
		t.Fatalf("leaf %d: %v", idx, err)
	}
	if e, err := tlog.ParseLeaf(ls[0].Data); err == nil {
		logged = e.BodyHash
	}
	if plain := sha256.Sum256([]byte("1234")); string(logged) != string(plain[:]) {
		t.Fatalf("the copied record's entry is not the plain SHA-256 of its body: not a store from before salts")
	}
	svc = service(st)
	expectVerify(t, svc, "")
	mustExec(t, st, `UPDATE records SET body = '1235' WHERE id = $1`, pin)
	expectVerify(t, svc, "body or its salt")
	mustExec(t, st, `UPDATE records SET body = '1234' WHERE id = $1`, pin)
	expectVerify(t, svc, "")

	alice, err = svc.Act(ctx, alice.Principal, "")
	if err != nil {
		t.Fatal(err)
	}
	fresh := remember(t, svc, alice, "1234")
	var salt []byte
	if err := st.Pool().QueryRow(ctx, `SELECT salt FROM records WHERE id = $1`, fresh).Scan(&salt); err != nil || len(salt) != custody.SaltSize {
		t.Errorf("a record written after the migration has salt %x (%v)", salt, err)
	}
	var revP *custody.Principal
	if err := st.View(ctx, func(tx custody.Tx) error {
		revP, err = tx.Principal(ctx, "acme", "rev")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Retire(ctx, &custody.Caller{Principal: revP, Subject: revP}, pin, "", true); err != nil {
		t.Fatal(err)
	}
	expectVerify(t, svc, "")
}

// actAs adds the principal acme/name with role to svc, acting for itself.
func actAs(t *testing.T, svc *custody.Service, name, role string) *custody.Caller {
	t.Helper()
	p, _, err := svc.AddPrincipal(t.Context(), custody.PrincipalInput{Tenant: "acme", Name: name, Roles: []string{role}})
	if err != nil {
		t.Fatal(err)
	}
	return &custody.Caller{Principal: p, Subject: p}
}
