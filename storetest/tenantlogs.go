package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/tlog"
)

// Two tenants' writes make two independent trees: each its own size, root
// and origin, each checkpoint verifying under its own origin only, each
// leaf proved against its own tenant's checkpoint and not the other's, and
// verify reporting each log on its own.
func testTenantLogs(t *testing.T, e *env) {
	acme, beta := e.user("acme", "alice"), e.user("beta", "bob")
	for i := range 3 {
		e.fact(acme, "n", fmt.Sprintf("acme %d", i))
	}
	for i := range 5 {
		e.fact(beta, "n", fmt.Sprintf("beta %d", i))
	}
	size := func(tenant string) uint64 {
		t.Helper()
		n, err := e.store.LogSize(e.ctx, tenant)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if a, b := size("acme"), size("beta"); a != 4 || b != 6 { // each tenant's principal, then its writes
		t.Fatalf("log sizes acme %d, beta %d; want 4 and 6", a, b)
	}
	open := func(tenant string) ([]byte, tlog.Checkpoint) {
		t.Helper()
		note, err := e.svc.Checkpoint(e.ctx, tenant)
		if err != nil {
			t.Fatal(err)
		}
		cp, err := e.svc.OpenCheckpoint(tenant, note)
		if err != nil {
			t.Fatalf("%s's checkpoint: %v", tenant, err)
		}
		return note, cp
	}
	acmeNote, acmeCP := open("acme")
	betaNote, betaCP := open("beta")
	if acmeCP.Origin == betaCP.Origin || acmeCP.Origin != e.svc.LogName()+"/acme" || bytes.Equal(acmeCP.Root, betaCP.Root) {
		t.Errorf("checkpoints %q (root %x) and %q (root %x): want two origins under %s and two roots",
			acmeCP.Origin, acmeCP.Root, betaCP.Origin, betaCP.Root, e.svc.LogName())
	}
	if _, err := e.svc.OpenCheckpoint("beta", acmeNote); err == nil {
		t.Error("acme's checkpoint opens as beta's")
	}

	// A proof of acme's leaf checks against acme's tree, not beta's of the
	// same size.
	leaves, err := e.store.Leaves(e.ctx, "acme", 0, acmeCP.Size)
	if err != nil || uint64(len(leaves)) != acmeCP.Size {
		t.Fatalf("acme's leaves: %d, %v", len(leaves), err)
	}
	betaAt, err := tlog.RootHash(e.ctx, custody.LogOf(e.store, "beta"), acmeCP.Size)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range leaves {
		if l.Tenant != "acme" {
			t.Errorf("acme's leaf %d is stored as %s's", i, l.Tenant)
		}
		p, err := e.svc.InclusionProof(e.ctx, "acme", uint64(i), acmeCP.Size)
		if err != nil {
			t.Fatal(err)
		}
		if err := tlog.VerifyInclusion(tlog.LeafHash(l.Data), uint64(i), acmeCP.Size, p, acmeCP.Root); err != nil {
			t.Errorf("acme's leaf %d against acme's checkpoint: %v", i, err)
		}
		if err := tlog.VerifyInclusion(tlog.LeafHash(l.Data), uint64(i), acmeCP.Size, p, betaAt); err == nil {
			t.Errorf("acme's leaf %d verifies against beta's tree", i)
		}
	}
	if _, err := e.svc.InclusionProof(e.ctx, "acme", 4, 5); !errors.Is(err, custody.ErrInvalid) {
		t.Errorf("a proof past the end of acme's log (which beta's covers): %v, want invalid", err)
	}

	rep, err := e.svc.Verify(e.ctx, custody.VerifyOptions{Checkpoints: [][]byte{append(append([]byte{}, acmeNote...), betaNote...)}})
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	if len(rep.Logs) != 2 || rep.Entries != 10 || rep.Checkpoints != 4 {
		t.Fatalf("verify report: %+v; want 2 logs, 10 entries, 4 checkpoints (stored and given, of each)", rep)
	}
	for _, l := range rep.Logs {
		want := map[string]tlog.Checkpoint{"acme": acmeCP, "beta": betaCP}[l.Tenant]
		if l.Problem != "" || l.Entries != want.Size || !bytes.Equal(l.Root, want.Root) || l.Origin != want.Origin {
			t.Errorf("verify's report of %s's log: %+v; want %d entries, root %x, origin %s", l.Tenant, l, want.Size, want.Root, want.Origin)
		}
	}
}

// The installation's log name: a new store is refused the name every
// installation would share, and takes one given or one made for it, unique;
// a store keeps its name, and another is refused.
func testLogName(t *testing.T, e *env) {
	if _, err := custody.ResolveLogName(e.ctx, e.store, custody.DefaultLogOrigin); !errors.Is(err, custody.ErrInvalid) || !strings.Contains(err.Error(), custody.DefaultLogOrigin) {
		t.Errorf("a new store named %s: %v, want it refused", custody.DefaultLogOrigin, err)
	}
	for _, bad := range []string{"has space", "https://example.com/log", "a+b", "trailing/"} {
		if _, err := custody.ResolveLogName(e.ctx, e.store, bad); !errors.Is(err, custody.ErrInvalid) {
			t.Errorf("log name %q: %v, want invalid", bad, err)
		}
	}
	got, err := custody.ResolveLogName(e.ctx, e.store, "example.com/custody")
	if err != nil || got.Name != "example.com/custody" || !got.Recorded || got.Generated {
		t.Fatalf("a new store named example.com/custody: %+v, %v", got, err)
	}
	if again, err := custody.ResolveLogName(e.ctx, e.store, ""); err != nil || again.Name != "example.com/custody" || again.Recorded {
		t.Errorf("the store's name again: %+v, %v", again, err)
	}
	if _, err := custody.ResolveLogName(e.ctx, e.store, "example.com/other"); !errors.Is(err, custody.ErrInvalid) || !strings.Contains(err.Error(), "example.com/custody") {
		t.Errorf("renaming the store's log: %v, want a refusal naming its name", err)
	}
	a, b := custody.NewLogName(), custody.NewLogName()
	if a == b || a == custody.DefaultLogOrigin || custody.ValidLogName(a) != nil {
		t.Errorf("generated log names %q, %q: want two valid, unique names", a, b)
	}
}
