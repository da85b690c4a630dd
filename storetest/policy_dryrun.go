package storetest

import (
	"errors"
	"strings"
	"testing"

	custody "github.com/custody-mem/custody"
)

// testPolicyDryRun: a new policy that cannot be evaluated on one of the
// tenant's recent candidates (here only on the key one record has) is
// refused, naming that record, and the active policy stays; forced, it
// installs and such a candidate waits as pending; a good policy installs.
func testPolicyDryRun(t *testing.T, e *env) {
	alice := e.user("acme", "alice")
	po := e.act(e.principal("acme", "po", []string{"policy_owner"}, nil, nil), "")
	e.fact(alice, "notes", "first")
	diet := e.remember(alice, custody.Candidate{Namespace: "prefs", Key: "diet", Class: custody.ClassPreference, Body: "vegetarian", Channel: custody.ChannelUser})
	e.fact(alice, "notes", "last")
	narrow := []byte(`@id("narrow")
permit (principal, action == Action::"admit", resource)
when { context.key == "diet" && context.no_such_attribute == "x" };
`)
	_, _, err := e.svc.ChangePolicy(e.ctx, po, narrow, custody.PolicyChange{})
	if !errors.Is(err, custody.ErrInvalid) || !strings.Contains(err.Error(), diet.ID) {
		t.Fatalf("a policy that fails on record %s: err = %v, want ErrInvalid naming it", diet.ID, err)
	}
	e.view(func(tx custody.Tx) error {
		if _, err := tx.Policy(e.ctx, "acme"); !isNotFound(err) {
			t.Errorf("a refused policy was stored: err = %v", err)
		}
		return nil
	})
	wantState(t, "after the refusal", e.fact(alice, "notes", "still admitted"), custody.StateAdmitted, custody.AuthorityUser)

	if _, _, err := e.svc.ChangePolicy(e.ctx, po, narrow, custody.PolicyChange{Force: true}); err != nil {
		t.Fatalf("forced: %v", err)
	}
	d := e.remember(alice, custody.Candidate{Namespace: "prefs", Key: "diet", Class: custody.ClassPreference, Body: "vegan", Channel: custody.ChannelUser})
	if d.State != custody.StatePending {
		t.Fatalf("under the forced policy: %s, want pending", d.State)
	}
	if _, _, err := e.svc.ChangePolicy(e.ctx, po, PolicyText(), custody.PolicyChange{}); err != nil {
		t.Fatalf("a good policy was refused: %v", err)
	}
}
