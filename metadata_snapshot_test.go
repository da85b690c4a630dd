package custody_test

import (
	"bytes"
	"maps"
	"path/filepath"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/sqlite"
)

// TestSnapshotCarriesMetadata: a record's metadata is exported with it and
// restored into an empty store, where get returns it, the metadata filter
// finds the record and verify passes (the restored entries commit to the
// same metadata under the record's own salt); a record without metadata
// comes back without.
func TestSnapshotCarriesMetadata(t *testing.T) {
	e := newEnv(t, custody.Options{})
	alice := e.act(e.principal("acme", "alice", []string{"user"}, []string{"user"}, nil), "")
	meta := custody.Metadata{"project": "apollo", "source.app": "notes-2"}
	with := e.remember(alice, custody.Candidate{Namespace: "n", Class: custody.ClassFact, Body: "launch window in May", Channel: "user", Metadata: meta})
	without := e.remember(alice, custody.Candidate{Namespace: "n", Class: custody.ClassFact, Body: "no labels here", Channel: "user"})
	var snap bytes.Buffer
	if _, err := e.svc.Export(e.ctx, "acme", &snap); err != nil {
		t.Fatal(err)
	}
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
	alice2 := e2.act(mustPrincipal(t, e2, "acme", "alice"), "")
	r, err := fresh.Get(e.ctx, alice2, with.ID)
	if err != nil || !maps.Equal(r.Metadata, meta) {
		t.Fatalf("restored record: %+v, %v; want metadata %v", r, err, meta)
	}
	if r, err := fresh.Get(e.ctx, alice2, without.ID); err != nil || len(r.Metadata) != 0 {
		t.Errorf("restored record without metadata: %+v, %v", r, err)
	}
	p, err := fresh.List(e.ctx, alice2, custody.ListInput{Filters: custody.Filters{Metadata: custody.Metadata{"source.app": "notes-2"}}})
	if err != nil || len(p.Items) != 1 || p.Items[0].ID != with.ID {
		t.Errorf("restored list by metadata: %+v, %v; want [%s]", p, err, with.ID)
	}
	if _, err := fresh.Verify(e.ctx, custody.VerifyOptions{}); err != nil {
		t.Fatalf("verify after restore: %v", err)
	}
}
