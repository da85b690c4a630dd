package custody

import (
	"reflect"
	"testing"

	"github.com/cedar-policy/cedar-go"
)

// A policy reads the record's key however its Cedar text spells the
// access, or through the context record whole; a policy that names a
// "key" only in a comment, a string or another record's attribute does
// not.
func TestReadsContextKey(t *testing.T) {
	const permit = `permit (principal, action == Action::"admit", resource) `
	for _, c := range []struct {
		text  string
		reads bool
	}{
		{permit + `when { context.key == "diet" };`, true},
		{permit + `when { context["key"] like "payee*" };`, true},
		{permit + `when { context has key };`, true},
		{permit + `unless { context.class == "fact" && !(context.key like "tls_*") };`, true},
		{permit + `when { context == {"key": "a"} };`, true},
		{permit + `when { [context].contains({"class": "fact"}) };`, true},
		{permit + `when { context.class == "fact" };`, false},
		{permit + `when { context.metadata has key && context.metadata.key == "x" };`, false},
		{permit + `when { context.class == "key" };`, false},
		{"// context.key is not read here\n" + permit + `when { context.channel == "user" };`, false},
		{permit + `when { principal == Principal::"acme/key" };`, false},
	} {
		set, err := cedar.NewPolicySetFromBytes("p.cedar", []byte(c.text))
		if err != nil {
			t.Fatalf("%s: %v", c.text, err)
		}
		if got := readsContext(set, "key"); got != c.reads {
			t.Errorf("readsContext(%q, key) = %v, want %v", c.text, got, c.reads)
		}
	}
	if MustDefaultPolicy().readsKey {
		t.Error("the default policy reads context.key: keyed writes are never answered from its memo")
	}
}

// FuzzKeptDecisionsAreDecisions: for any policy text that parses, a keyed
// write answered from the memo is decided as evaluating it would be,
// whatever the key. A rule that reads the key in a way readsContext
// misses would make a kept decision answer another key: this finds it.
// Run: go test -run '^$' -fuzz FuzzKeptDecisionsAreDecisions -fuzztime 5m .
func FuzzKeptDecisionsAreDecisions(f *testing.F) {
	const permit = `permit (principal, action == Action::"admit", resource) `
	for _, seed := range []string{
		MustDefaultPolicy().Text,
		permit + `when { context.key like "tls_*" };`,
		permit + `when { context["key"] == "notes" };`,
		permit + `when { context has key && context.key != "" };`,
		permit + `when { context == {"key": "a"} };`,
		permit + `when { [context].contains({"class": "fact"}) };`,
		permit + `when { context.class == "fact" };`,
		`@outcome("quarantine") forbid (principal, action, resource) when { context.key like "*pay*" };` + "\n" + permit + `;`,
		permit + `when { if context.class == "fact" then context.key == "x" else true };`,
	} {
		f.Add(seed, "tls_cert", "notes")
	}
	alice := &Principal{Tenant: "acme", Name: "alice", Roles: []string{"user"}}
	f.Fuzz(func(t *testing.T, text, key1, key2 string) {
		p, err := ParsePolicy([]byte(text))
		if err != nil {
			return
		}
		for _, key := range []string{key1, key2, key1, "", key2} {
			in := AdmissionInput{Principal: alice, Channel: "user", Class: "fact", Key: key, Authority: AuthorityUser, Audience: "owner"}
			if got, want := p.Admit(in), p.admit(in); !reflect.DeepEqual(got, want) {
				t.Fatalf("policy %q (reads the key: %v), key %q: Admit = %+v, evaluated = %+v", text, p.readsKey, key, got, want)
			}
		}
	})
}
