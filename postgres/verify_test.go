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
	st, svc, alice := verifyStore(t)
	root := remember(t, svc, alice, "root")
	other := remember(t, svc, alice, "other")
	remember(t, svc, alice, "summary", root)
	expectVerify(t, svc, "")
	mustExec(t, st, `UPDATE edges SET weight = 0.1`)
	expectVerify(t, svc, "lineage edges")
	mustExec(t, st, `UPDATE edges SET weight = 0.3`)
	expectVerify(t, svc, "")
	mustExec(t, st, `UPDATE edges SET parent = $1`, other)
	expectVerify(t, svc, "lineage edges")
	mustExec(t, st, `UPDATE edges SET parent = $1`, root)
	expectVerify(t, svc, "")
	mustExec(t, st, `DELETE FROM edges`)
	expectVerify(t, svc, "lineage edges")
}

// Verify finds a record whose gate text or search vector was rewritten
// behind its back (the gate would no longer find the memory), and passes
// again once they are the record's own.
func TestVerifyIndexedText(t *testing.T) {
	st, svc, alice := verifyStore(t)
	ctx := t.Context()
	if _, err := svc.Remember(ctx, alice, custody.Candidate{Namespace: "n", Class: custody.ClassFact, Body: "pay ACCT-7777", Channel: "user"}); err != nil {
		t.Fatal(err)
	}
	expectVerify(t, svc, "")
	mustExec(t, st, `UPDATE records SET norm = 'nothing to see '`)
	expectVerify(t, svc, "gate's lookups")
	mustExec(t, st, `UPDATE records SET norm = $1`, custody.RecordGateIndex(&custody.Record{Body: "pay ACCT-7777", Namespace: "n"}))
	expectVerify(t, svc, "")
	mustExec(t, st, `UPDATE records SET search = to_tsvector('simple', 'nothing')`)
	expectVerify(t, svc, "search vector")
	mustExec(t, st, `UPDATE records SET search = 'pay:1 acct-7777:2 acct:3 7777:4'::tsvector`)
	expectVerify(t, svc, "")
}

// verifyStore is a fresh store on its own database, a service over it and
// a user acting for herself.
func verifyStore(t *testing.T) (*postgres.Store, *custody.Service, *custody.Caller) {
	st := openDSN(t, newDatabase(t))
	svc := storetest.NewService(t, st, storetest.NewClock(storetest.Start))
	return st, svc, userOf(t, svc)
}

// remember has c remember an episode with body, derived from parents with
// weight 0.3 (a strong edge), and returns its id; it must be admitted.
func remember(t *testing.T, svc *custody.Service, c *custody.Caller, body string, parents ...string) string {
	t.Helper()
	in := custody.Candidate{Namespace: "n", Class: custody.ClassEpisode, Body: body, Channel: "user"}
	for _, p := range parents {
		in.DerivedFrom = append(in.DerivedFrom, custody.Edge{ID: p, Weight: 0.3})
	}
	d, err := svc.Remember(t.Context(), c, in)
	if err != nil || d.State != custody.StateAdmitted {
		t.Fatalf("remember %q = %+v, %v", body, d, err)
	}
	return d.ID
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

// Reindex rebuilds edges and indexed text that verify reports as derived
// differences; afterwards verify passes and the gate finds the memory
// again. With a record rewritten it refuses and rebuilds nothing.
func TestReindex(t *testing.T) {
	st, svc, alice := verifyStore(t)
	ctx := t.Context()
	remember(t, svc, alice, "pay ACCT-7777", remember(t, svc, alice, "root"))
	mentions := func() int {
		var n int
		err := st.View(ctx, func(tx custody.Tx) error {
			recs, err := tx.Mentioning(ctx, custody.Scope{Tenant: "acme", Subject: "alice"}, custody.MentionQuery{Text: "acct7777"})
			n = len(recs)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if mentions() != 1 {
		t.Fatal("the gate does not find the payment note on an untouched store")
	}
	mustExec(t, st, `DELETE FROM edges`)
	mustExec(t, st, `UPDATE records SET norm = 'nothing to see ', search = to_tsvector('simple', 'nothing')`)
	_, err := svc.Verify(ctx, custody.VerifyOptions{})
	var d *custody.Difference
	if !errors.As(err, &d) || !d.Derived {
		t.Fatalf("verify after the damage = %v; want a difference in a derived structure", err)
	}
	if mentions() != 0 {
		t.Fatal("the damage hid nothing from the gate")
	}
	if _, err := svc.Reindex(ctx, custody.ReindexOptions{}); err != nil {
		t.Fatalf("reindex: %v", err)
	}
	expectVerify(t, svc, "")
	if mentions() != 1 {
		t.Error("the gate does not find the payment note after the reindex")
	}

	mustExec(t, st, `DELETE FROM edges`)
	mustExec(t, st, `UPDATE records SET body = 'pay ACCT-1042' WHERE body = 'pay ACCT-7777'`)
	if _, err := svc.Reindex(ctx, custody.ReindexOptions{}); !errors.Is(err, custody.ErrRecordsDiffer) {
		t.Fatalf("reindex over a rewritten record = %v; want ErrRecordsDiffer", err)
	}
	var n int
	if err := st.Pool().QueryRow(ctx, `SELECT COUNT(*) FROM edges`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d edges after the refused reindex (%v); want none rebuilt", n, err)
	}
}
