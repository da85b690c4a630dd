package custody_test

import (
	"crypto/ed25519"
	"errors"
	"strings"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/tlog"
)

// An entry signed by a principal after its revocation is a difference,
// even with a good signature (a copy of its key made before): the log
// shows the principal could no longer act. Its entries from before the
// revocation verify.
func TestVerifyRefusesEntriesAfterRevocation(t *testing.T) {
	e := newEnv(t, custody.Options{})
	alice := e.act(e.principal("acme", "alice", []string{"user"}, nil, nil), "")
	if _, err := e.svc.Remember(e.ctx, alice, custody.Candidate{Namespace: "n", Class: custody.ClassFact, Body: "tea", Channel: "user"}); err != nil {
		t.Fatal(err)
	}
	var sealed []byte
	if err := e.store.View(e.ctx, func(tx custody.Tx) (err error) {
		sealed, err = tx.SealedKey(e.ctx, "acme", "alice")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	raw, err := e.svc.ServerKey().Open(sealed, []byte("acme/alice"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.RevokePrincipal(e.ctx, custody.PrincipalAdmin{Tenant: "acme", By: "operator"}, "alice", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Verify(e.ctx, custody.VerifyOptions{}); err != nil {
		t.Fatalf("verify after the revocation: %v", err)
	}
	forged := &tlog.Entry{Tenant: "acme", Actor: "acme/alice", Transition: "gate", Time: e.now, Details: map[string]string{"subject": "alice"}}
	forged.Sign(ed25519.PrivateKey(raw))
	if err := e.store.Update(e.ctx, func(tx custody.Tx) error {
		_, err := tx.AppendLeaf(e.ctx, "acme", forged.Leaf())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	_, err = e.svc.Verify(e.ctx, custody.VerifyOptions{})
	var d *custody.Difference
	if !errors.As(err, &d) || !strings.Contains(d.What, "after its revocation") {
		t.Fatalf("verify with an entry signed after the revocation: %v", err)
	}
}
