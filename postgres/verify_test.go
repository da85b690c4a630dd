package postgres_test

import (
	"errors"
	"strings"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/postgres"
	"github.com/custody-mem/custody/storetest"
)

// Verify finds lineage edges that disagree with the records' parents
// (the cascade walks the edges), and passes again once they agree.
func TestVerifyLineageEdges(t *testing.T) {
	st := openDSN(t, newDatabase(t))
	svc := storetest.NewService(t, st, storetest.NewClock(storetest.Start))
	ctx := t.Context()
	alice := userOf(t, svc)
	root, err := svc.Remember(ctx, alice, custody.Candidate{Namespace: "n", Class: custody.ClassEpisode, Body: "root", Channel: "user"})
	if err != nil {
		t.Fatal(err)
	}
	other, err := svc.Remember(ctx, alice, custody.Candidate{Namespace: "n", Class: custody.ClassEpisode, Body: "other", Channel: "user"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Remember(ctx, alice, custody.Candidate{Namespace: "n", Class: custody.ClassEpisode, Body: "summary", Channel: "user",
		DerivedFrom: []custody.Edge{{ID: root.ID, Weight: 0.3}}}); err != nil {
		t.Fatal(err)
	}
	expectVerify(t, svc, "")
	mustExec(t, st, `UPDATE edges SET weight = 0.1`)
	expectVerify(t, svc, "lineage edges")
	mustExec(t, st, `UPDATE edges SET weight = 0.3`)
	expectVerify(t, svc, "")
	mustExec(t, st, `UPDATE edges SET parent = $1`, other.ID)
	expectVerify(t, svc, "lineage edges")
	mustExec(t, st, `UPDATE edges SET parent = $1`, root.ID)
	expectVerify(t, svc, "")
	mustExec(t, st, `DELETE FROM edges`)
	expectVerify(t, svc, "lineage edges")
}

// Verify finds a record whose gate text or search vector was rewritten
// behind its back (the gate would no longer find the memory), and passes
// again once they are the record's own.
func TestVerifyIndexedText(t *testing.T) {
	st := openDSN(t, newDatabase(t))
	svc := storetest.NewService(t, st, storetest.NewClock(storetest.Start))
	ctx := t.Context()
	alice := userOf(t, svc)
	if _, err := svc.Remember(ctx, alice, custody.Candidate{Namespace: "n", Class: custody.ClassFact, Body: "pay ACCT-7777", Channel: "user"}); err != nil {
		t.Fatal(err)
	}
	expectVerify(t, svc, "")
	mustExec(t, st, `UPDATE records SET norm = 'nothing to see '`)
	expectVerify(t, svc, "gate's lookups")
	mustExec(t, st, `UPDATE records SET norm = 'payacct7777 '`)
	expectVerify(t, svc, "")
	mustExec(t, st, `UPDATE records SET search = to_tsvector('simple', 'nothing')`)
	expectVerify(t, svc, "search vector")
	mustExec(t, st, `UPDATE records SET search = to_tsvector('simple', 'pay acct 7777')`)
	expectVerify(t, svc, "")
}

// expectVerify runs verify on svc: it must pass when want is "", and
// otherwise report a difference naming want.
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

// mustExec runs q on st's database behind the store's back.
func mustExec(t *testing.T, st *postgres.Store, q string, args ...any) {
	t.Helper()
	if _, err := st.Pool().Exec(t.Context(), q, args...); err != nil {
		t.Fatal(err)
	}
}
