package custody_test

import (
	"bytes"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/sqlite"
)

func eligibleSet(t *testing.T, e *env, c *custody.Caller) []string {
	p, err := e.svc.List(e.ctx, c, custody.ListInput{Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range p.Items {
		out = append(out, r.ID+"="+r.Body+"/"+r.Authority.String())
	}
	slices.Sort(out)
	return out
}

func TestExportRetireRestore(t *testing.T) {
	e := newEnv(t, custody.Options{})
	ids := workload(t, e)
	alice, _ := e.svc.Act(e.ctx, mustPrincipal(t, e, "acme", "alice"), "")
	rev, _ := e.svc.Act(e.ctx, mustPrincipal(t, e, "acme", "rev"), "")
	before := eligibleSet(t, e, alice)
	var snap bytes.Buffer
	if _, err := e.svc.Export(e.ctx, "acme", &snap); err != nil {
		t.Fatal(err)
	}
	// Retire the user's fact after the snapshot, then restore the snapshot.
	if _, err := e.svc.Retire(e.ctx, rev, ids[0], "wrong account", false); err != nil {
		t.Fatal(err)
	}
	rep, err := e.svc.Restore(e.ctx, snap.Bytes(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Restored != 0 {
		t.Fatalf("restore over the live store re-inserted %d records", rep.Restored)
	}
	if _, err := e.svc.Get(e.ctx, alice, ids[0]); !errors.Is(err, custody.ErrNotFound) {
		t.Fatalf("retired record after restore: %v", err)
	}
	// One byte changed: refused.
	bad := bytes.Clone(snap.Bytes())
	i := bytes.Index(bad, []byte("ACCT-1042"))
	bad[i+5] = '9'
	if _, err := e.svc.Restore(e.ctx, bad, nil); !errors.Is(err, custody.ErrBadSnapshot) {
		t.Fatalf("tampered snapshot: %v", err)
	}
	// Into an empty store on the same key: exactly the eligible set.
	st, err := sqlite.Open(e.ctx, filepath.Join(t.TempDir(), "empty.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	fresh, err := custody.New(st, e.svc.ServerKey(), custody.Options{Now: func() time.Time { return e.now }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fresh.Restore(e.ctx, snap.Bytes(), nil); err != nil {
		t.Fatal(err)
	}
	e2 := &env{t: t, ctx: e.ctx, store: st, svc: fresh, now: e.now}
	alice2, err := fresh.Act(e.ctx, mustPrincipal(t, e2, "acme", "alice"), "")
	if err != nil {
		t.Fatal(err)
	}
	if got := eligibleSet(t, e2, alice2); !slices.Equal(got, before) {
		t.Fatalf("restored eligible set = %q, want %q", got, before)
	}
	if _, err := fresh.Verify(e.ctx, custody.VerifyOptions{}); err != nil {
		t.Fatalf("verify after restore: %v", err)
	}
	// A snapshot from another server key is foreign.
	other := newEnv(t, custody.Options{})
	if _, err := other.svc.Restore(other.ctx, snap.Bytes(), nil); !errors.Is(err, custody.ErrBadSnapshot) {
		t.Fatalf("foreign snapshot: %v", err)
	}
}

func mustPrincipal(t testing.TB, e *env, tenant, name string) *custody.Principal {
	var p *custody.Principal
	err := e.store.View(e.ctx, func(tx custody.Tx) error {
		var err error
		p, err = tx.Principal(e.ctx, tenant, name)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}
