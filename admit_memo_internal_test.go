package custody

import (
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"
)

// A policy's kept decision is the decision it makes, input for input, and
// what a caller does with the one it is given changes nothing kept: for
// the default policy, which never reads the record's key (keyed inputs
// are kept, by every other field), and for one that decides by the key
// (keyed inputs are not kept).
func TestAdmitMemoIsAdmit(t *testing.T) {
	byKey, err := ParsePolicy([]byte(`@id("user") permit(principal, action, resource) when { context.channel == "user" };
@id("payee-by-agent") @outcome("quarantine") forbid(principal, action, resource) when { context.key like "payee*" && context.channel != "user" };
@id("agent") permit(principal, action, resource) when { context.channel == "agent" };`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		p        *Policy
		readsKey bool
	}{{"default", MustDefaultPolicy(), false}, {"by key", byKey, true}} {
		t.Run(c.name, func(t *testing.T) {
			if c.p.readsKey != c.readsKey {
				t.Fatalf("readsKey = %v, want %v", c.p.readsKey, c.readsKey)
			}
			admitMemoIsAdmit(t, c.p)
		})
	}
}

func admitMemoIsAdmit(t *testing.T, p *Policy) {
	rng := rand.New(rand.NewPCG(3, 4))
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	principals := []*Principal{
		{Tenant: "acme", Name: "alice", Roles: []string{"user"}},
		{Tenant: "acme", Name: "bot", Roles: []string{"agent"}},
		{Tenant: "acme", Name: "rev", Roles: []string{"user", "reviewer"}},
		{Tenant: "other", Name: "alice", Roles: []string{"user"}},
	}
	hits, keyedHits := 0, 0
	for range 20000 {
		in := AdmissionInput{
			Principal: principals[rng.IntN(len(principals))],
			Channel:   pick("user", "agent", "tool:email", "derive", "import"),
			Class:     Class(pick("fact", "procedure", "episode", "preference")),
			// Keys are [A-Za-z0-9_.:-] (ValidKey): their spellings differ in
			// case and separators, which Cedar's like tells apart.
			Key:       pick("", "", "payee_account", "tea", "payee_iban", "Payee_Account", "payee.iban", "PAYEE:acct", "pay-ee"),
			Authority: Authority(rng.IntN(5)),
			Audience:  pick("owner", "tenant", "group:ops"),
			Overwrite: rng.IntN(2) == 0, Sensitive: rng.IntN(3) == 0, HasSession: rng.IntN(2) == 0, Derived: rng.IntN(4) == 0,
		}
		if rng.IntN(3) == 0 {
			in.Metadata = Metadata{"source": pick("a", "b"), "k": pick("1", "2")}
		}
		_, kept := p.memo.get(in.admitKey(p.readsKey))
		if kept {
			hits++
			if in.Key != "" {
				keyedHits++
				if p.readsKey {
					t.Fatalf("a keyed input was kept by a policy that reads the key: %+v", in)
				}
			}
		}
		got, want := p.Admit(in), p.admit(in)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("input %+v (kept: %v): Admit = %+v, admit = %+v", in, kept, got, want)
		}
		// The caller's copy is its own.
		got.Rules = append(got.Rules[:0], "changed by the caller")
		got.Inputs["principal"] = "changed by the caller"
		if again := p.Admit(in); !reflect.DeepEqual(again, want) {
			t.Fatalf("after a caller changed its decision, Admit = %+v, want %+v", again, want)
		}
	}
	if hits == 0 {
		t.Fatal("no input came twice: nothing kept was compared")
	}
	if !p.readsKey && keyedHits == 0 {
		t.Fatal("no keyed input was answered from the memo of a policy that does not read the key")
	}
}

// Inputs that differ in any field the policy reads have keys of their
// own, however their strings are cut.
func TestAdmitKeyIsWhole(t *testing.T) {
	a := &Principal{Tenant: "acme", Name: "alice", Roles: []string{"user"}}
	base := AdmissionInput{Principal: a, Channel: "user", Class: "fact", Audience: "owner"}
	variants := []AdmissionInput{base}
	for _, change := range []func(*AdmissionInput){
		func(in *AdmissionInput) {
			in.Principal = &Principal{Tenant: "acme", Name: "bob", Roles: []string{"user"}}
		},
		func(in *AdmissionInput) {
			in.Principal = &Principal{Tenant: "acme", Name: "alice", Roles: []string{"user", "reviewer"}}
		},
		func(in *AdmissionInput) {
			in.Principal = &Principal{Tenant: "acme", Name: "alice", Roles: []string{"user,reviewer"}}
		},
		func(in *AdmissionInput) { in.Channel = "agent" },
		func(in *AdmissionInput) { in.Class = "procedure" },
		func(in *AdmissionInput) { in.Key = "k" },
		func(in *AdmissionInput) { in.Authority = AuthorityUser },
		func(in *AdmissionInput) { in.Audience = "tenant" },
		func(in *AdmissionInput) { in.Overwrite = true },
		func(in *AdmissionInput) { in.Sensitive = true },
		func(in *AdmissionInput) { in.HasSession = true },
		func(in *AdmissionInput) { in.Derived = true },
		func(in *AdmissionInput) { in.Metadata = Metadata{"a": "b"} },
		func(in *AdmissionInput) { in.Metadata = Metadata{"a": "", "b": ""} },
		func(in *AdmissionInput) { in.Metadata = Metadata{"a:1:b": ""} },
		func(in *AdmissionInput) { in.Channel, in.Class = "user1:f", "act" },
	} {
		in := base
		change(&in)
		variants = append(variants, in)
	}
	seen := map[string]int{}
	for i, in := range variants {
		k := in.admitKey(true)
		if j, ok := seen[k]; ok {
			t.Errorf("inputs %d (%+v) and %d (%+v) share the key %q", j, variants[j], i, in, k)
		}
		seen[k] = i
	}
}

// BenchmarkAdmitKeyed is the admission of a keyed user fact, a new key
// each time, under the default policy (which never reads the key, so the
// decision is answered from the memo) and under one that reads it
// (evaluated each time): `go test -run '^$' -bench AdmitKeyed .`.
func BenchmarkAdmitKeyed(b *testing.B) {
	byKey, err := ParsePolicy([]byte(MustDefaultPolicy().Text + "\n" + `@id("tls-held") @outcome("quarantine") forbid (principal, action, resource) when { context.key like "tls_*" };`))
	if err != nil {
		b.Fatal(err)
	}
	alice := &Principal{Tenant: "acme", Name: "alice", Roles: []string{"user"}}
	for _, c := range []struct {
		name string
		p    *Policy
	}{{"default", MustDefaultPolicy()}, {"reads-key", byKey}} {
		b.Run(c.name, func(b *testing.B) {
			for i := range b.N {
				a := c.p.Admit(AdmissionInput{Principal: alice, Channel: "user", Class: "fact", Key: "k" + strconv.Itoa(i), Authority: AuthorityUser, Audience: "owner"})
				if a.State != StateAdmitted {
					b.Fatalf("%s: %+v", c.name, a)
				}
			}
		})
	}
}
