package storetest

import (
	"testing"

	custody "github.com/custody-mem/custody"
)

// metadataRule is the example of docs/policy.md: a write whose metadata
// marks it secret is quarantined for review, whatever its channel.
const metadataRule = `
@id("secret-metadata-needs-review")
@outcome("quarantine")
forbid (principal, action == Action::"admit", resource)
when { context.metadata has sensitivity && context.metadata.sensitivity == "secret" };
`

// The admission policy reads a write's metadata as context.metadata: with
// the rule above, alice's fact marked secret is quarantined by that rule,
// and the same fact marked public, or with no metadata, is admitted.
func testMetadataPolicy(t *testing.T, e *env) {
	alice := e.user("acme", "alice")
	po := e.act(e.principal("acme", "po", []string{"policy_owner"}, nil, nil), "")
	if _, _, err := e.svc.SetPolicy(e.ctx, po, append(PolicyText(), metadataRule...)); err != nil {
		t.Fatal(err)
	}
	write := func(m custody.Metadata) *custody.Decision {
		return e.remember(alice, custody.Candidate{Namespace: "n", Class: custody.ClassFact, Body: "the vault code", Channel: "user", Metadata: m})
	}
	secret := write(custody.Metadata{"sensitivity": "secret"})
	if secret.State != custody.StateQuarantined || secret.Receipt == nil || len(secret.Receipt.Rules) != 1 || secret.Receipt.Rules[0] != "secret-metadata-needs-review" {
		t.Errorf("a fact marked secret: %s by %v; want quarantined by secret-metadata-needs-review", secret.State, secret.Receipt)
	}
	for _, m := range []custody.Metadata{{"sensitivity": "public"}, nil} {
		if d := write(m); d.State != custody.StateAdmitted {
			t.Errorf("a fact with metadata %v: %s (%s); want admitted", m, d.State, d.Reason)
		}
	}
	e.verify()
}

// Erasing a record erases its metadata with its body (it may hold
// personal data): the stored record keeps none, its erasure entry commits
// to none, and verify passes; a record that is only retired keeps it.
func testMetadataErase(t *testing.T, e *env) {
	alice := e.user("acme", "alice")
	write := func(body string) string {
		return e.remember(alice, custody.Candidate{Namespace: "n", Class: custody.ClassFact, Body: body, Channel: "user",
			Metadata: custody.Metadata{"email": "alice@example.com"}}).ID
	}
	erased, retired := write("to be erased"), write("to be retired")
	if _, err := e.svc.Forget(e.ctx, alice, erased, "", true); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Forget(e.ctx, alice, retired, "", false); err != nil {
		t.Fatal(err)
	}
	if r := e.record("acme", erased); !r.Erased || len(r.Metadata) != 0 {
		t.Errorf("the erased record: erased %v, metadata %v; want erased, none", r.Erased, r.Metadata)
	}
	if r := e.record("acme", retired); r.Metadata["email"] != "alice@example.com" {
		t.Errorf("the retired record's metadata: %v; want it kept", r.Metadata)
	}
	e.verify()
}
