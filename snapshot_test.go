package custody_test

import (
	"bytes"
	"errors"
	"path/filepath"
	"slices"
	"strings"
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

// TestExportRetireRestore: a record retired after a snapshot stays retired
// when the snapshot is restored, over the live store and into a new one
// (the registry beside the server key remembers it), and so does what was
// derived from it: its summary comes back suspended, never admitted
// (design rule 10). Everything else comes back exactly as it was.
func TestExportRetireRestore(t *testing.T) {
	registry := filepath.Join(t.TempDir(), "server.key.registry")
	e := newEnv(t, custody.Options{RegistryFile: registry})
	ids := workload(t, e)
	alice, _ := e.svc.Act(e.ctx, mustPrincipal(t, e, "acme", "alice"), "")
	harness, _ := e.svc.Act(e.ctx, mustPrincipal(t, e, "acme", "harness"), "alice")
	rev, _ := e.svc.Act(e.ctx, mustPrincipal(t, e, "acme", "rev"), "")
	sum := e.remember(harness, custody.Candidate{Namespace: "n", Class: "episode", Body: "pays ACCT-1042 monthly", Channel: "derive",
		DerivedFrom: []custody.Edge{{ID: ids[0], Weight: 1}}})
	kept := e.remember(alice, custody.Candidate{Namespace: "n", Key: "city", Class: "fact", Body: "lives in Lyon", Channel: "user"})
	keptSum := e.remember(harness, custody.Candidate{Namespace: "n", Class: "episode", Body: "based in Lyon", Channel: "derive",
		DerivedFrom: []custody.Edge{{ID: kept.ID, Weight: 1}}})
	for _, d := range []*custody.Decision{sum, kept, keptSum} {
		if d.State != custody.StateAdmitted {
			t.Fatalf("%q: %s, want admitted", d.Record.Body, d.State)
		}
	}
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
	for _, id := range []string{ids[0], sum.ID} {
		if _, err := e.svc.Get(e.ctx, alice, id); !errors.Is(err, custody.ErrNotFound) {
			t.Fatalf("retired record or its summary after restore: %v", err)
		}
	}
	// One byte changed: refused.
	bad := bytes.Clone(snap.Bytes())
	i := bytes.Index(bad, []byte("ACCT-1042"))
	bad[i+5] = '9'
	if _, err := e.svc.Restore(e.ctx, bad, nil); !errors.Is(err, custody.ErrBadSnapshot) {
		t.Fatalf("tampered snapshot: %v", err)
	}
	// Into an empty store on the same key and registry: the eligible set
	// without the retired record and its summary.
	st, err := sqlite.Open(e.ctx, filepath.Join(t.TempDir(), "empty.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	fresh, err := custody.New(st, e.svc.ServerKey(), custody.Options{Now: func() time.Time { return e.now }, RegistryFile: registry})
	if err != nil {
		t.Fatal(err)
	}
	rep, err = fresh.Restore(e.ctx, snap.Bytes(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(rep.Withheld, ids[0]) || !slices.Contains(rep.Withheld, sum.ID) || slices.Contains(rep.Withheld, keptSum.ID) {
		t.Errorf("withheld = %q, want the retired record %s and its summary %s, not %s", rep.Withheld, ids[0], sum.ID, keptSum.ID)
	}
	e2 := &env{t: t, ctx: e.ctx, store: st, svc: fresh, now: e.now}
	alice2, err := fresh.Act(e.ctx, mustPrincipal(t, e2, "acme", "alice"), "")
	if err != nil {
		t.Fatal(err)
	}
	gone := map[string]bool{ids[0]: true, sum.ID: true}
	var wantSet []string
	for _, s := range before {
		if id, _, _ := strings.Cut(s, "="); !gone[id] {
			wantSet = append(wantSet, s)
		}
	}
	if got := eligibleSet(t, e2, alice2); !slices.Equal(got, wantSet) || len(wantSet) != len(before)-2 {
		t.Fatalf("restored eligible set = %q, want %q", got, wantSet)
	}
	err = st.View(e.ctx, func(tx custody.Tx) error {
		r, err := tx.Record(e.ctx, "acme", sum.ID)
		if err != nil {
			return err
		}
		if r.State != custody.StateSuspended || r.Receipt == nil || !slices.Contains(r.Receipt.Rules, "cascade") || !strings.Contains(r.Receipt.Reason, ids[0]) {
			t.Errorf("restored summary: %s, receipt %+v; want suspended naming its retired parent", r.State, r.Receipt)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
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
