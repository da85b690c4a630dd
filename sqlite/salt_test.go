package sqlite_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/sqlite"
	"github.com/custody-mem/custody/storetest"
	"github.com/custody-mem/custody/tlog"
)

// expectVerify runs verify: it must pass when want is "", and otherwise
// report a difference naming want.
func expectVerify(t *testing.T, svc *custody.Service, want string) {
	t.Helper()
	_, err := svc.Verify(t.Context(), custody.VerifyOptions{})
	var d *custody.Difference
	switch {
	case want == "" && err != nil:
		t.Fatalf("verify: %v", err)
	case want != "" && (!errors.As(err, &d) || !strings.Contains(d.What, want)):
		t.Fatalf("verify = %v; want a difference naming %q", err, want)
	}
}

func mustExec(t *testing.T, st *sqlite.Store, q string, args ...any) {
	t.Helper()
	if _, err := st.DB().ExecContext(t.Context(), q, args...); err != nil {
		t.Fatal(err)
	}
}

// Verify still proves a salted body unchanged: an edited body, a replaced
// salt and a removed salt (posing as a record older than salts) are each a
// difference, and the record as written passes again.
func TestVerifyCatchesBodyAndSaltEdits(t *testing.T) {
	st, _, svc, alice := serviceAt(t, t.TempDir())
	id := derive(t, svc, alice, "1234")
	var salt []byte
	if err := st.DB().QueryRowContext(t.Context(), `SELECT salt FROM records WHERE id = ?`, id).Scan(&salt); err != nil || len(salt) != custody.SaltSize {
		t.Fatalf("stored salt %x, %v", salt, err)
	}
	expectVerify(t, svc, "")
	mustExec(t, st, `UPDATE records SET body = '1235' WHERE id = ?`, id)
	expectVerify(t, svc, "body or its salt")
	mustExec(t, st, `UPDATE records SET body = '1234' WHERE id = ?`, id)
	expectVerify(t, svc, "")
	mustExec(t, st, `UPDATE records SET salt = randomblob(32) WHERE id = ?`, id)
	expectVerify(t, svc, "body or its salt")
	mustExec(t, st, `UPDATE records SET salt = x'' WHERE id = ?`, id)
	expectVerify(t, svc, "body or its salt")
	mustExec(t, st, `UPDATE records SET salt = ? WHERE id = ?`, salt, id)
	expectVerify(t, svc, "")

	rev := reviewer(t, svc)
	if _, err := svc.Retire(t.Context(), rev, id, "", true); err != nil {
		t.Fatal(err)
	}
	expectVerify(t, svc, "")
	mustExec(t, st, `UPDATE records SET salt = ? WHERE id = ?`, salt, id)
	expectVerify(t, svc, "erased but still holds a body or its salt")
}

// A schema 8 database, whose records have no salt and whose log commits to
// bodies by plain SHA-256, gains the salt column at open and verifies; its
// records stay as they were (and an edit of one is still caught), one can
// be erased, and new records are salted beside them.
func TestMigrateFromSchema8(t *testing.T) {
	ctx := t.Context()
	st, key, svc, alice := serviceAt(t, t.TempDir())
	pin := derive(t, svc, alice, "1234")
	derive(t, svc, alice, "from the pin", pin)
	last := colours(t, svc, alice, "blue", "green")
	if _, err := svc.Quarantine(ctx, reviewer(t, svc), last, ""); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "c.db")
	old, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	storetest.CopyUnsalted(t, key, st, old)
	old.Close()
	rewind(t, path, `ALTER TABLE records DROP COLUMN salt`, `ALTER TABLE principals DROP COLUMN log_index`, `PRAGMA user_version = 8`)

	st = reopen(t, path, 8)
	var v int
	if err := st.DB().QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil || v != sqlite.SchemaVersion {
		t.Fatalf("user_version after migration = %d, %v; want %d", v, err, sqlite.SchemaVersion)
	}
	svc = serviceOver(t, st, key)
	r := record(t, st, pin)
	if r.Salt != nil || !bytes.Equal(loggedBodyHash(t, st, r.LogIndex), sha256Of("1234")) {
		t.Fatalf("the copied record has salt %x and a log entry not of the plain SHA-256 of its body: not a schema 8 store", r.Salt)
	}
	expectVerify(t, svc, "")
	mustExec(t, st, `UPDATE records SET body = '1235' WHERE id = ?`, pin)
	expectVerify(t, svc, "body or its salt")
	mustExec(t, st, `UPDATE records SET body = '1234' WHERE id = ?`, pin)
	expectVerify(t, svc, "")

	alice, _ = svc.Act(ctx, alice.Principal, "")
	fresh := derive(t, svc, alice, "1234")
	if s := record(t, st, fresh).Salt; len(s) != custody.SaltSize {
		t.Errorf("a record written after the migration has salt %x", s)
	}
	rev, err := svc.Act(ctx, principal(t, st, "rev"), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Retire(ctx, rev, pin, "", true); err != nil {
		t.Fatal(err)
	}
	expectVerify(t, svc, "")
}

func record(t *testing.T, st *sqlite.Store, id string) *custody.Record {
	t.Helper()
	var r *custody.Record
	err := st.View(t.Context(), func(tx custody.Tx) error {
		var err error
		r, err = tx.Record(t.Context(), "acme", id)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func principal(t *testing.T, st *sqlite.Store, name string) *custody.Principal {
	t.Helper()
	var p *custody.Principal
	err := st.View(t.Context(), func(tx custody.Tx) error {
		var err error
		p, err = tx.Principal(t.Context(), "acme", name)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func loggedBodyHash(t *testing.T, st *sqlite.Store, index uint64) []byte {
	t.Helper()
	ls, err := st.Leaves(t.Context(), "acme", index, index+1)
	if err != nil || len(ls) != 1 {
		t.Fatalf("leaf %d: %v", index, err)
	}
	e, err := tlog.ParseLeaf(ls[0].Data)
	if err != nil {
		t.Fatal(err)
	}
	return e.BodyHash
}

func sha256Of(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}
