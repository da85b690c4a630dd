package storetest

import (
	"errors"
	"slices"
	"strings"
	"testing"

	custody "github.com/custody-mem/custody"
)

// bodiesWith lists the ids of the tenant's records whose stored body
// contains s, in any state, and those the gate's tracing finds by it.
func (e *env) bodiesWith(tenant, subject, s string) (stored, mentioned []string) {
	e.t.Helper()
	e.view(func(tx custody.Tx) error {
		if err := tx.ScanRecords(e.ctx, tenant, func(r *custody.Record) error {
			if strings.Contains(r.Body, s) {
				stored = append(stored, r.ID)
			}
			return nil
		}); err != nil {
			return err
		}
		recs, err := tx.Mentioning(e.ctx, custody.Scope{Tenant: tenant, Subject: subject}, custody.MentionQuery{Text: s})
		mentioned = recordIDs(recs)
		return err
	})
	return stored, mentioned
}

// The owner retires or erases a record of its own; nobody else may, not
// even an agent acting for it. An erased body is in no record, no search
// and no gate tracing; the log keeps the record's entries and verifies.
func testForget(t *testing.T, e *env) {
	alice := e.user("acme", "alice")
	bob := e.user("acme", "bob")
	agent := e.act(e.principal("acme", "harness", []string{"agent"}, nil, nil), "alice")
	old := e.fact(alice, "n", "zanzibar old address 12 Elm").ID
	secret := e.fact(alice, "n", "zanzibar passport X1234567").ID
	kept := e.fact(alice, "n", "zanzibar favourite tea").ID
	bobs := e.fact(bob, "n", "zanzibar bob's own passport X1234567").ID

	for _, tc := range []struct {
		who  *custody.Caller
		want error
	}{{agent, custody.ErrForbidden}, {bob, custody.ErrNotFound}} {
		if _, err := e.svc.Forget(e.ctx, tc.who, secret, "", true); !errors.Is(err, tc.want) {
			t.Errorf("%s erasing alice's record: %v; want %v", tc.who.Principal.ID(), err, tc.want)
		}
	}
	if got, err := e.svc.Forget(e.ctx, alice, old, "moved", false); err != nil || !slices.Equal(got, []string{old}) {
		t.Fatalf("alice retiring her record: %v, %v", got, err)
	}
	if r := e.record("acme", old); r.State != custody.StateRetired || r.Erased || r.Body == "" {
		t.Errorf("the retired record: %s erased=%v body=%q; want retired with its body", r.State, r.Erased, r.Body)
	}
	if e.visible(alice, old) {
		t.Error("the retired record is still retrieved")
	}
	if _, err := e.svc.Forget(e.ctx, alice, old, "", false); !errors.Is(err, custody.ErrConflict) {
		t.Errorf("retiring it again: %v; want ErrConflict", err)
	}
	if _, err := e.svc.Forget(e.ctx, alice, secret, "", true); err != nil {
		t.Fatalf("alice erasing her record: %v", err)
	}
	if r := e.record("acme", secret); !r.Erased || r.Body != "" || len(r.Salt) != 0 || r.State != custody.StateRetired {
		t.Errorf("the erased record: %+v", r)
	}
	stored, mentioned := e.bodiesWith("acme", "alice", "X1234567")
	if !slices.Equal(stored, []string{bobs}) || len(mentioned) != 0 {
		t.Errorf("after the erasure the passport is stored in %v and traced in %v; want bob's record only, and not traced for alice", stored, mentioned)
	}
	if ids := e.searchIDs(alice, custody.SearchInput{Query: "passport"}); len(ids) != 0 {
		t.Errorf("search after the erasure: %v", ids)
	}
	// Twins: her other record and bob's are untouched.
	if !e.visible(alice, kept) || !e.visible(bob, bobs) {
		t.Error("an untouched record left retrieval")
	}
	if ids := e.searchIDs(bob, custody.SearchInput{Query: "passport"}); !slices.Equal(ids, []string{bobs}) {
		t.Errorf("bob's search: %v", ids)
	}
	if _, err := e.svc.Forget(e.ctx, alice, secret, "", true); !errors.Is(err, custody.ErrConflict) {
		t.Errorf("erasing it again: %v; want ErrConflict", err)
	}
	e.verify()
}

// A subject's erasure erases every body it owns, in every state, and
// suspends what was derived from them; other subjects' records stay.
// The admin may ask it for anyone, a user for itself only.
func testEraseSubject(t *testing.T, e *env) {
	alice := e.user("acme", "alice")
	bob := e.user("acme", "bob")
	admin := e.act(e.principal("acme", "root", []string{"admin"}, nil, nil), "")
	mail := e.act(e.principal("acme", "mail", []string{"agent"}, []string{"tool:email"}, nil), "alice")
	a1 := e.fact(alice, "n", "zanzibar alice one").ID
	a2 := e.remember(alice, custody.Candidate{Namespace: "p", Key: "payee", Class: custody.ClassFact, Body: "zanzibar alice payee", Channel: "user"}).ID
	held := e.remember(mail, custody.Candidate{Namespace: "n", Class: custody.ClassFact, Body: "zanzibar alice from an email", Channel: "tool:email"})
	if held.State != custody.StateQuarantined {
		t.Fatalf("the email fact: %s", held.State)
	}
	b1 := e.fact(bob, "n", "zanzibar bob one").ID
	derived := e.remember(bob, custody.Candidate{Namespace: "n", Class: custody.ClassEpisode, Body: "zanzibar bob from alice", Channel: "user",
		Audience: "tenant", DerivedFrom: []custody.Edge{{ID: b1, Weight: 1}}}).ID
	e.fact(e.user("other", "alice"), "n", "zanzibar the other tenant's alice")

	if _, err := e.svc.EraseSubject(e.ctx, bob, "alice", ""); !errors.Is(err, custody.ErrForbidden) {
		t.Errorf("bob erasing alice: %v; want ErrForbidden", err)
	}
	if _, err := e.svc.EraseSubject(e.ctx, admin, "nobody", ""); !errors.Is(err, custody.ErrNotFound) {
		t.Errorf("erasing an unknown subject: %v; want ErrNotFound", err)
	}
	rc, err := e.svc.EraseSubject(e.ctx, admin, "alice", "erasure request 42")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range rc.Erased {
		ids = append(ids, r.ID)
	}
	if !sameSet(ids, []string{a1, a2, held.ID}) || rc.AlreadyErased != 0 || rc.Subject != "alice" || rc.By != "acme/root" {
		t.Fatalf("the receipt: %+v; want %v", rc, []string{a1, a2, held.ID})
	}
	if stored, mentioned := e.bodiesWith("acme", "alice", "zanzibar alice"); len(stored) != 0 || len(mentioned) != 0 {
		t.Errorf("alice's bodies after her erasure: stored %v, traced %v", stored, mentioned)
	}
	if stored, _ := e.bodiesWith("other", "alice", "zanzibar"); len(stored) != 1 {
		t.Errorf("the other tenant's alice: %v", stored)
	}
	for _, id := range []string{b1, derived} {
		if r := e.record("acme", id); r.Erased || !strings.Contains(r.Body, "zanzibar bob") || !e.visible(bob, id) {
			t.Errorf("bob's record %s after alice's erasure: %+v", id, r)
		}
	}
	e.verify()
	// Again: nothing left to erase; alice may ask for herself.
	again, err := e.svc.EraseSubject(e.ctx, alice, "alice", "")
	if err != nil || len(again.Erased) != 0 || again.AlreadyErased != 3 {
		t.Fatalf("alice's own erasure afterwards: %+v, %v", again, err)
	}
	e.verify()
}
