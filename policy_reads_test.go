package custody_test

import (
	"strings"
	"testing"

	custody "github.com/custody-mem/custody"
)

// A policy that decides by the record's key decides each keyed write by
// its own key, however many writes of the same kind came before it:
// decisions are kept by their input (admit_memo.go), and the key is part
// of it here. None of these keys is sensitive, so the key alone tells the
// writes apart.
func TestKeyedWritesDecidedByTheirKeys(t *testing.T) {
	e := newEnv(t, custody.Options{})
	owner := e.act(e.principal("acme", "owner", []string{"policy_owner"}, nil, nil), "")
	alice := e.act(e.principal("acme", "alice", []string{"user"}, nil, nil), "")
	byKey := []byte(`@id("tls-held")
@outcome("quarantine")
forbid (principal, action == Action::"admit", resource) when { context.key like "tls_*" };
@id("all")
permit (principal, action == Action::"admit", resource);
`)
	if _, _, err := e.svc.SetPolicy(e.ctx, owner, byKey); err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		for _, c := range []struct {
			key  string
			want custody.State
		}{
			{"notes", custody.StateAdmitted},
			{"tls_cert", custody.StateQuarantined},
			{"tea", custody.StateAdmitted},
			{"tls_key", custody.StateQuarantined},
			{"diet", custody.StateAdmitted},
		} {
			d := e.remember(alice, custody.Candidate{Namespace: "n" + string(rune('0'+round)), Key: c.key, Class: "fact", Body: "a value for " + c.key, Channel: "user"})
			if d.State != c.want || d.Receipt.Inputs["key"] != c.key {
				t.Fatalf("round %d, key %s: %s (inputs %v), want %s", round, c.key, d.State, d.Receipt.Inputs, c.want)
			}
		}
	}
}

// Under the default policy, which never reads the key, keyed writes of one
// kind share a kept decision, and each still names its own key: in its
// inputs, and in the reason it waits for the owner's confirmation.
func TestKeyedDecisionsNameTheirKeys(t *testing.T) {
	e := newEnv(t, custody.Options{})
	alice := e.act(e.principal("acme", "alice", []string{"user"}, nil, nil), "")
	for _, key := range []string{"payee_account", "payee_iban", "home_address"} {
		first := e.remember(alice, custody.Candidate{Namespace: "pay", Key: key, Class: "fact", Body: "the first " + key, Channel: "user"})
		if first.State != custody.StateAdmitted || first.Receipt.Inputs["key"] != key {
			t.Fatalf("%s, first write: %s (inputs %v), want admitted", key, first.State, first.Receipt.Inputs)
		}
		again := e.remember(alice, custody.Candidate{Namespace: "pay", Key: key, Class: "fact", Body: "another " + key, Channel: "user"})
		if again.State != custody.StatePendingConfirmation || again.Receipt.Inputs["key"] != key || !strings.Contains(again.Reason, `"`+key+`"`) {
			t.Fatalf("%s, overwrite: %s, reason %q, inputs %v; want pending_confirmation naming the key", key, again.State, again.Reason, again.Receipt.Inputs)
		}
	}
}
