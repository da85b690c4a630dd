package custody

import (
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
