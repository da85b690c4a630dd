package postgres_test

import (
	"errors"
	"strings"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/storetest"
)

// Verify finds lineage edges that disagree with the records' parents
// (the cascade walks the edges), and passes again once they agree.
func TestVerifyLineageEdges(t *testing.T) {
	st := openDSN(t, newDatabase(t))
	svc := storetest.NewService(t, st, storetest.NewClock(storetest.Start))
	ctx := t.Context()
	p, _, err := svc.AddPrincipal(ctx, custody.PrincipalInput{Tenant: "acme", Name: "alice", Roles: []string{"user"}})
	if err != nil {
		t.Fatal(err)
	}
	alice := &custody.Caller{Principal: p, Subject: p}
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
	verify := func(want string) {
		t.Helper()
		_, err := svc.Verify(ctx, custody.VerifyOptions{})
		var d *custody.Difference
		switch {
		case want == "" && err != nil:
			t.Fatalf("verify: %v", err)
		case want != "" && (!errors.As(err, &d) || !strings.Contains(d.What, want)):
			t.Fatalf("verify = %v; want a difference naming %q", err, want)
		}
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := st.Pool().Exec(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
	verify("")
	exec(`UPDATE edges SET weight = 0.1`)
	verify("lineage edges")
	exec(`UPDATE edges SET weight = 0.3`)
	verify("")
	exec(`UPDATE edges SET parent = $1`, other.ID)
	verify("lineage edges")
	exec(`UPDATE edges SET parent = $1`, root.ID)
	verify("")
	exec(`DELETE FROM edges`)
	verify("lineage edges")
}

// Verify finds a record whose gate text or search vector was rewritten
// behind its back (the gate would no longer find the memory), and passes
// again once they are the record's own.
func TestVerifyIndexedText(t *testing.T) {
	st := openDSN(t, newDatabase(t))
	svc := storetest.NewService(t, st, storetest.NewClock(storetest.Start))
	ctx := t.Context()
	p, _, err := svc.AddPrincipal(ctx, custody.PrincipalInput{Tenant: "acme", Name: "alice", Roles: []string{"user"}})
	if err != nil {
		t.Fatal(err)
	}
	alice := &custody.Caller{Principal: p, Subject: p}
	if _, err := svc.Remember(ctx, alice, custody.Candidate{Namespace: "n", Class: custody.ClassFact, Body: "pay ACCT-7777", Channel: "user"}); err != nil {
		t.Fatal(err)
	}
	verify := func(want string) {
		t.Helper()
		_, err := svc.Verify(ctx, custody.VerifyOptions{})
		var d *custody.Difference
		switch {
		case want == "" && err != nil:
			t.Fatalf("verify: %v", err)
		case want != "" && (!errors.As(err, &d) || !strings.Contains(d.What, want)):
			t.Fatalf("verify = %v; want a difference naming %q", err, want)
		}
	}
	exec := func(q string) {
		t.Helper()
		if _, err := st.Pool().Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	verify("")
	exec(`UPDATE records SET norm = 'nothing to see '`)
	verify("gate's lookups")
	exec(`UPDATE records SET norm = 'payacct7777 '`)
	verify("")
	exec(`UPDATE records SET search = to_tsvector('simple', 'nothing')`)
	verify("search vector")
	exec(`UPDATE records SET search = to_tsvector('simple', 'pay acct 7777')`)
	verify("")
}
