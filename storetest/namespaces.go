package storetest

import (
	"errors"
	"slices"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
)

// Namespaces lists what the subject may retrieve, by the eligibility of
// Get: another owner's owner-only namespace, a quarantined or retired
// record's, an expired one's and another tenant's are not named; a
// tenant-wide record's and a group's the subject is in are.
func testNamespaces(t *testing.T, e *env) {
	alice := e.user("acme", "alice", "finance")
	bob := e.user("acme", "bob")
	mail := e.act(e.principal("acme", "mail", []string{"agent"}, []string{"tool:email"}, nil), "alice")
	rev := e.act(e.principal("acme", "rev", []string{"reviewer"}, nil, nil), "")
	fact := func(c *custody.Caller, ns, audience string) *custody.Decision {
		return e.remember(c, custody.Candidate{Namespace: ns, Class: custody.ClassFact, Body: "in " + ns, Channel: "user", Audience: audience})
	}
	fact(alice, "work", "")
	fact(alice, "work/notes", "")
	fact(alice, "workshop", "")
	fact(bob, "bob/private", "")
	fact(bob, "shared/wiki", "tenant")
	e.remember(e.user("acme", "carol", "finance"), custody.Candidate{Namespace: "finance/q3", Class: custody.ClassFact, Body: "q3", Channel: "user", Audience: "group:finance"})
	if d := e.remember(mail, custody.Candidate{Namespace: "inbox", Class: custody.ClassFact, Body: "from an email", Channel: "tool:email"}); d.State != custody.StateQuarantined {
		t.Fatalf("the email fact: %s", d.State)
	}
	gone := fact(alice, "old", "").ID
	if _, err := e.svc.Retire(e.ctx, rev, gone, "", false); err != nil {
		t.Fatal(err)
	}
	soon := e.clock.Now().Add(time.Minute)
	e.remember(alice, custody.Candidate{Namespace: "temp", Class: custody.ClassFact, Body: "soon gone", Channel: "user", ExpiresAt: &soon})
	fact(e.user("other", "alice"), "foreign", "")
	e.clock.Advance(time.Hour)

	list := func(c *custody.Caller, prefix string) []string {
		t.Helper()
		p, err := e.svc.Namespaces(e.ctx, c, prefix, "", 0)
		if err != nil {
			t.Fatal(err)
		}
		return p.Items
	}
	if got, want := list(alice, ""), []string{"finance/q3", "shared/wiki", "work", "work/notes", "workshop"}; !slices.Equal(got, want) {
		t.Errorf("alice's namespaces: %v; want %v", got, want)
	}
	if got, want := list(bob, ""), []string{"bob/private", "shared/wiki"}; !slices.Equal(got, want) {
		t.Errorf("bob's namespaces: %v; want %v", got, want)
	}
	if got, want := list(alice, "work"), []string{"work", "work/notes"}; !slices.Equal(got, want) {
		t.Errorf("alice's namespaces under work: %v; want %v", got, want)
	}
	if got := list(alice, "bob"); len(got) != 0 {
		t.Errorf("alice under bob: %v", got)
	}
	// Pages.
	p, err := e.svc.Namespaces(e.ctx, alice, "", "", 2)
	if err != nil || !slices.Equal(p.Items, []string{"finance/q3", "shared/wiki"}) || p.NextCursor == "" {
		t.Fatalf("first page: %+v, %v", p, err)
	}
	p, err = e.svc.Namespaces(e.ctx, alice, "", p.NextCursor, 2)
	if err != nil || !slices.Equal(p.Items, []string{"work", "work/notes"}) {
		t.Fatalf("second page: %+v, %v", p, err)
	}
	if _, err := e.svc.Namespaces(e.ctx, alice, "bad prefix!", "", 0); !errors.Is(err, custody.ErrInvalid) {
		t.Errorf("a malformed prefix: %v; want ErrInvalid", err)
	}
}
