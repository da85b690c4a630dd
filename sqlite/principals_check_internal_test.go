package sqlite

import (
	"errors"
	"path/filepath"
	"testing"

	custody "github.com/custody-mem/custody"
)

// TestWriteChecksPrincipalsInTheWriter: a write of a token the server
// holds in its cache reads no principals version before the writer; the
// writer checks it in its transaction. A change made meanwhile through
// another handle on the file (another server, the offline CLI) is seen
// all the same: a token revoked there writes nothing, while a write whose
// principal the change left untouched (another principal added) is
// authenticated again and applied.
func TestWriteChecksPrincipalsInTheWriter(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "c.db")
	a, b := openAt(t, path), openAt(t, path)
	svcs := services(t, a, b)
	sa, sb := svcs[0], svcs[1]
	admin := custody.PrincipalAdmin{Tenant: "acme", By: "operator"}
	token := func(name string) string {
		t.Helper()
		_, tok := user(t, sa, name)
		return tok
	}
	alice, bob := token("alice"), token("bob")
	count := func() int {
		t.Helper()
		var n int
		if err := a.DB().QueryRowContext(ctx, `SELECT count(*) FROM records`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// write authenticates tok as an HTTP write does and writes a note;
	// reads is how many times it read the principals version.
	write := func(tok, body string) (reads int64, err error) {
		t.Helper()
		before := a.pv.queries.Load()
		defer func() { reads = a.pv.queries.Load() - before }()
		wctx, p, err := sa.AuthenticateWrite(ctx, tok)
		if err != nil {
			return 0, err
		}
		c, err := sa.Act(wctx, p, "")
		if err != nil {
			return 0, err
		}
		_, err = sa.Remember(wctx, c, custody.Candidate{Namespace: "n", Class: "fact", Body: body, Channel: "user"})
		return 0, err
	}
	for _, tok := range []string{alice, bob} { // the tokens kept
		if _, err := sa.Authenticate(ctx, tok); err != nil {
			t.Fatal(err)
		}
	}
	n := count()
	if reads, err := write(alice, "a cached token's write"); err != nil || reads != 0 {
		t.Fatalf("a write of a cached token: %v, %d reads of the principals version before the writer; want it written with none", err, reads)
	}
	if count() != n+1 {
		t.Fatal("the cached token's write wrote nothing")
	}

	// Another principal added through the other handle: bob is untouched,
	// authenticated again, and his write applied.
	if _, _, err := sb.AddPrincipal(ctx, custody.PrincipalInput{Tenant: "acme", Name: "carol", Roles: []string{"user"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := write(bob, "after carol was added"); err != nil {
		t.Fatalf("bob's write after another principal was added: %v", err)
	}
	if count() != n+2 {
		t.Fatal("bob's write wrote nothing")
	}

	// alice revoked through the other handle: her token, still in this
	// server's cache, writes nothing.
	if _, err := sa.Authenticate(ctx, alice); err != nil { // kept under the version now
		t.Fatal(err)
	}
	if _, err := sb.RevokePrincipal(ctx, admin, "alice", "stolen laptop"); err != nil {
		t.Fatal(err)
	}
	_, err := write(alice, "after the revocation")
	if !errors.Is(err, custody.ErrUnauthenticated) {
		t.Fatalf("a write of a token revoked through another handle: %v, want it unauthenticated", err)
	}
	if got := count(); got != n+2 {
		t.Fatalf("%d records written by a revoked token", got-n-2)
	}
	// The twin: bob, untouched by the revocation, writes.
	if _, err := write(bob, "bob writes on"); err != nil {
		t.Fatalf("bob's write after alice's revocation: %v", err)
	}
	if count() != n+3 {
		t.Fatal("bob's write after the revocation wrote nothing")
	}
}
