package custody_test

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/sqlite"
)

// A snapshot taken before an erasure, restored over the store or into an
// empty one on the same key and registry, never brings an erased body
// back; the records that were not erased come back with theirs, and the
// restored store verifies. An export after the erasure holds no erased
// body.
func TestRestoreAfterErasure(t *testing.T) {
	dir := t.TempDir()
	registry := filepath.Join(dir, "registry")
	e := newEnvAt(t, dir, custody.Options{RegistryFile: registry})
	alice := e.act(e.principal("acme", "alice", []string{"user"}, nil, nil), "")
	bob := e.act(e.principal("acme", "bob", []string{"user"}, nil, nil), "")
	root := e.act(e.principal("acme", "root", []string{"admin"}, nil, nil), "")
	remember := func(c *custody.Caller, body string) string {
		d, err := e.svc.Remember(e.ctx, c, custody.Candidate{Namespace: "n", Class: custody.ClassFact, Body: body, Channel: "user"})
		if err != nil {
			t.Fatal(err)
		}
		return d.ID
	}
	one := remember(alice, "alice passport X1234567")
	kept := remember(alice, "alice likes tea")
	bobs := remember(bob, "bob likes coffee")
	var before bytes.Buffer
	if _, err := e.svc.Export(e.ctx, "acme", &before); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Forget(e.ctx, alice, one, "", true); err != nil {
		t.Fatal(err)
	}
	rc, err := e.svc.EraseSubject(e.ctx, root, "alice", "")
	if err != nil || len(rc.Erased) != 1 || rc.Erased[0].ID != kept || rc.AlreadyErased != 1 {
		t.Fatalf("alice's erasure: %+v, %v", rc, err)
	}
	var after bytes.Buffer
	if _, err := e.svc.Export(e.ctx, "acme", &after); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(after.String(), "X1234567") || strings.Contains(after.String(), "likes tea") || !strings.Contains(after.String(), "bob likes coffee") {
		t.Fatal("the export after the erasure holds an erased body, or lost bob's")
	}

	// Over the store itself: nothing is re-inserted.
	if rep, err := e.svc.Restore(e.ctx, before.Bytes(), nil); err != nil || rep.Restored != 0 {
		t.Fatalf("restore over the store: %+v, %v", rep, err)
	}
	// Into an empty store on the same key and registry.
	st, err := sqlite.Open(e.ctx, filepath.Join(t.TempDir(), "empty.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	fresh, err := custody.New(st, e.svc.ServerKey(), custody.Options{RegistryFile: registry, Now: func() time.Time { return e.now }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fresh.Restore(e.ctx, before.Bytes(), nil); err != nil {
		t.Fatal(err)
	}
	err = st.View(e.ctx, func(tx custody.Tx) error {
		for _, id := range []string{one, kept} {
			r, err := tx.Record(e.ctx, "acme", id)
			if err != nil {
				return err
			}
			if r.Body != "" || !r.Erased || len(r.Salt) != 0 || r.State == custody.StateAdmitted {
				t.Errorf("erased record %s after the restore: body %q erased %v state %s", id, r.Body, r.Erased, r.State)
			}
		}
		r, err := tx.Record(e.ctx, "acme", bobs)
		if err == nil && r.Body != "bob likes coffee" {
			t.Errorf("bob's record after the restore: %q", r.Body)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fresh.Verify(e.ctx, custody.VerifyOptions{}); err != nil {
		t.Fatalf("verify after the restore: %v", err)
	}
	if _, err := e.svc.Verify(e.ctx, custody.VerifyOptions{}); err != nil {
		t.Fatalf("verify of the erased store: %v", err)
	}
}

// A principal revoked after a snapshot was taken stays revoked when the
// snapshot is restored into an empty store on the same key and registry:
// its old token is refused; a principal that was not revoked comes back
// and authenticates; the restored store verifies.
func TestRestoreAfterRevocation(t *testing.T) {
	dir := t.TempDir()
	registry := filepath.Join(dir, "registry")
	e := newEnvAt(t, dir, custody.Options{RegistryFile: registry})
	_, alice, err := e.svc.AddPrincipal(e.ctx, custody.PrincipalInput{Tenant: "acme", Name: "alice", Roles: []string{"user"}})
	if err != nil {
		t.Fatal(err)
	}
	_, bob, err := e.svc.AddPrincipal(e.ctx, custody.PrincipalInput{Tenant: "acme", Name: "bob", Roles: []string{"user"}})
	if err != nil {
		t.Fatal(err)
	}
	var snap bytes.Buffer
	if _, err := e.svc.Export(e.ctx, "acme", &snap); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.RevokePrincipal(e.ctx, custody.PrincipalAdmin{Tenant: "acme", By: "operator"}, "alice", "stolen laptop"); err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(e.ctx, filepath.Join(t.TempDir(), "empty.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	fresh, err := custody.New(st, e.svc.ServerKey(), custody.Options{RegistryFile: registry, Now: func() time.Time { return e.now }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fresh.Restore(e.ctx, snap.Bytes(), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := fresh.Authenticate(e.ctx, alice); !errors.Is(err, custody.ErrUnauthenticated) {
		t.Fatalf("alice's old token after the restore: %v; want it refused", err)
	}
	if _, err := fresh.Authenticate(e.ctx, bob); err != nil {
		t.Fatalf("bob after the restore: %v", err)
	}
	info, err := fresh.ShowPrincipal(e.ctx, custody.PrincipalAdmin{Tenant: "acme"}, "alice")
	if err != nil || info.Status != custody.PrincipalRevoked {
		t.Fatalf("alice after the restore: %+v, %v", info, err)
	}
	if _, err := fresh.Verify(e.ctx, custody.VerifyOptions{}); err != nil {
		t.Fatalf("verify after the restore: %v", err)
	}
}
