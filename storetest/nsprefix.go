package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
)

// A namespace_prefix on list and search keeps the namespace and those
// below it by whole segments (work: work, work/notes; not workshop), with
// the eligibility of every read inside the query: another user's
// owner-only records, a quarantined one and an expired one in the prefix
// are never returned, also when 200 of the other user's records in the
// prefix are newer and rank higher than the eligible ones, so eligibility
// applied after the LIMIT would find none of them; and 30 of the subject's
// own records just outside the prefix are newer and rank higher still, so
// a prefix applied after the LIMIT would find none either.
func testNamespacePrefix(t *testing.T, e *env) {
	alice := e.user("acme", "alice")
	bob := e.user("acme", "bob")
	mail := e.act(e.principal("acme", "mail", []string{"agent"}, []string{"tool:email"}, nil), "alice")
	fact := func(c *custody.Caller, ns, audience string) string {
		return e.remember(c, custody.Candidate{Namespace: ns, Class: custody.ClassFact, Body: "ledger in " + ns, Channel: "user", Audience: audience}).ID
	}
	work := fact(alice, "work", "")
	notes := fact(alice, "work/notes", "")
	shared := fact(bob, "work/shared", "tenant")
	workshop := fact(alice, "workshop", "")
	fact(bob, "workshop", "tenant")
	fact(e.user("other", "alice"), "work", "")
	quarantined := e.remember(mail, custody.Candidate{Namespace: "work/inbox", Class: custody.ClassFact, Body: "ledger from an email", Channel: "tool:email"})
	if quarantined.State != custody.StateQuarantined {
		t.Fatalf("the email fact: %s", quarantined.State)
	}
	soon := e.clock.Now().Add(time.Minute)
	expired := e.remember(alice, custody.Candidate{Namespace: "work/temp", Class: custody.ClassFact, Body: "ledger soon gone", Channel: "user", ExpiresAt: &soon}).ID
	flood := make([]custody.Candidate, 200)
	for i := range flood {
		flood[i] = custody.Candidate{Namespace: []string{"work", "work/notes"}[i%2], Class: custody.ClassFact,
			Body: fmt.Sprintf("ledger ledger ledger bob %d", i), Channel: "user"}
	}
	ds, err := e.svc.RememberBatch(e.ctx, bob, flood)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if d.State != custody.StateAdmitted {
			t.Fatalf("bob's record: %s", d.State)
		}
	}
	// Alice's own records in workshop, newer and ranking higher than those
	// in work: a prefix applied after the LIMIT would find none of hers.
	near := make([]custody.Candidate, 30)
	for i := range near {
		near[i] = custody.Candidate{Namespace: "workshop", Class: custody.ClassFact, Body: fmt.Sprintf("ledger ledger ledger alice %d", i), Channel: "user"}
	}
	if _, err := e.svc.RememberBatch(e.ctx, alice, near); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Hour)

	want := []string{work, notes, shared}
	if got := e.listIDs(alice, custody.ListInput{NamespacePrefix: "work"}); !sameSet(got, want) {
		t.Errorf("alice's list under work = %v; want %v (work, work/notes, the tenant's work/shared)", got, want)
	}
	p, err := e.svc.List(e.ctx, alice, custody.ListInput{NamespacePrefix: "work", Limit: 2})
	if err != nil || len(p.Items) != 2 || p.NextCursor == "" {
		t.Errorf("a page of 2 under work: %+v, %v; want 2 records and a cursor", p, err)
	}
	if got := e.searchIDs(alice, custody.SearchInput{Query: "ledger", NamespacePrefix: "work"}); !sameSet(got, want) {
		t.Errorf("alice's search under work = %v; want %v", got, want)
	}
	if got, want := e.searchIDs(alice, custody.SearchInput{Query: "ledger", NamespacePrefix: "work", Limit: 1}), 1; len(got) != want {
		t.Errorf("alice's search under work, limit 1 = %v; want one record", got)
	}
	// The prefix is a whole segment: workshop is its own namespace.
	if got, want := e.listIDs(alice, custody.ListInput{NamespacePrefix: "workshop"}), 32; len(got) != want {
		t.Errorf("alice's list under workshop: %d records; want her 31 and the tenant's", len(got))
	}
	if got := e.listIDs(alice, custody.ListInput{NamespacePrefix: "work/notes"}); !sameSet(got, []string{notes}) {
		t.Errorf("alice's list under work/notes = %v; want [%s]", got, notes)
	}
	for _, id := range []string{quarantined.ID, expired, workshop} {
		for _, got := range [][]string{
			e.listIDs(alice, custody.ListInput{NamespacePrefix: "work"}),
			e.searchIDs(alice, custody.SearchInput{Query: "ledger", NamespacePrefix: "work", Limit: custody.MaxSearchLimit}),
		} {
			if slices.Contains(got, id) {
				t.Errorf("%s is returned under work: %v", id, got)
			}
		}
	}
	// Bob sees his own 200 and the tenant's record, not alice's.
	if got := e.listIDs(bob, custody.ListInput{NamespacePrefix: "work"}); len(got) != 201 || slices.Contains(got, work) || !slices.Contains(got, shared) {
		t.Errorf("bob's list under work: %d records; want his 200 and the tenant's work/shared", len(got))
	}
	for _, in := range []custody.ListInput{
		{Namespace: "work", NamespacePrefix: "work"},
		{NamespacePrefix: "bad prefix!"},
		{NamespacePrefix: "work/"},
	} {
		if _, err := e.svc.List(e.ctx, alice, in); !errors.Is(err, custody.ErrInvalid) {
			t.Errorf("list %+v: %v; want ErrInvalid", in, err)
		}
		if _, err := e.svc.Search(e.ctx, alice, custody.SearchInput{Query: "ledger", Namespace: in.Namespace, NamespacePrefix: in.NamespacePrefix}); !errors.Is(err, custody.ErrInvalid) {
			t.Errorf("search %+v: %v; want ErrInvalid", in, err)
		}
	}
}
