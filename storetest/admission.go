package storetest

import (
	"slices"
	"testing"

	custody "github.com/custody-mem/custody"
)

// Admission outcomes by channel and class, as stored and as retrieved.
func testAdmission(t *testing.T, e *env) {
	alice := e.user("acme", "alice")
	harness := e.act(e.principal("acme", "harness", []string{"agent"}, []string{"agent", "tool:email"}, nil), "alice")
	for _, tc := range []struct {
		name    string
		c       *custody.Caller
		channel string
		class   custody.Class
		state   custody.State
		auth    custody.Authority
	}{
		{"user fact", alice, "user", custody.ClassFact, custody.StateAdmitted, custody.AuthorityUser},
		{"user preference", alice, "user", custody.ClassPreference, custody.StateAdmitted, custody.AuthorityUser},
		{"tool:email fact", harness, "tool:email", custody.ClassFact, custody.StateQuarantined, custody.AuthorityExternal},
		{"tool:email episode", harness, "tool:email", custody.ClassEpisode, custody.StateAdmitted, custody.AuthorityExternal},
		{"agent fact without session", harness, "agent", custody.ClassFact, custody.StateQuarantined, custody.AuthorityAgent},
		{"agent episode", harness, "agent", custody.ClassEpisode, custody.StateAdmitted, custody.AuthorityAgent},
		{"user procedure", alice, "user", custody.ClassProcedure, custody.StateQuarantined, custody.AuthorityUser},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := e.remember(tc.c, custody.Candidate{Namespace: "adm", Class: tc.class, Body: "admission " + tc.name, Channel: tc.channel})
			wantState(t, tc.name, d, tc.state, tc.auth)
			if d.Receipt == nil || d.Receipt.PolicyVersion == "" || len(d.Receipt.Rules) == 0 || d.Receipt.LogIndex != d.LogIndex {
				t.Errorf("receipt = %+v, want policy version, rules and log index %d", d.Receipt, d.LogIndex)
			}
			r := e.record("acme", d.ID)
			if r.State != tc.state || r.Authority != tc.auth || r.Channel != tc.channel || r.Owner != "alice" ||
				r.Writer != tc.c.Principal.ID() || r.LogIndex != d.LogIndex {
				t.Errorf("stored record = %+v", r)
			}
			if got, want := e.visible(alice, d.ID), tc.state == custody.StateAdmitted; got != want {
				t.Errorf("alice gets %s record: %v, want %v", tc.state, got, want)
			}
		})
	}
}

// A sensitive key's overwrite waits for the owner; the old value stays in
// force; the owner's confirmation replaces it. A non-sensitive overwrite is
// admitted at once.
func testSensitiveOverwrite(t *testing.T, e *env) {
	alice := e.user("acme", "alice")
	harness := e.act(e.principal("acme", "harness", []string{"agent"}, nil, nil), "alice")
	write := func(key, body string) *custody.Decision {
		return e.remember(alice, custody.Candidate{Namespace: "bank", Key: key, Class: custody.ClassFact, Body: body, Channel: "user"})
	}
	bodies := func(key string) []string {
		p, err := e.svc.List(e.ctx, alice, custody.ListInput{Namespace: "bank", Key: key})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range p.Items {
			out = append(out, r.Body)
		}
		return out
	}
	old := write("payee_account", "ACCT-1042")
	wantState(t, "first payee", old, custody.StateAdmitted, custody.AuthorityUser)
	ch := write("payee_account", "ACCT-2000")
	wantState(t, "payee overwrite", ch, custody.StatePendingConfirmation, custody.AuthorityUser)
	if got := bodies("payee_account"); !slices.Equal(got, []string{"ACCT-1042"}) {
		t.Errorf("before confirmation list = %q, want [ACCT-1042]", got)
	}
	if e.visible(alice, ch.ID) || !e.visible(alice, old.ID) {
		t.Errorf("before confirmation: pending visible %v, old visible %v; want false, true", e.visible(alice, ch.ID), e.visible(alice, old.ID))
	}
	if _, err := e.svc.Confirm(e.ctx, harness, ch.ID); err == nil {
		t.Error("an agent confirmed for the owner")
	}
	r, err := e.svc.Confirm(e.ctx, alice, ch.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r.State != custody.StateAdmitted || r.Authority != custody.AuthorityConfirmed {
		t.Errorf("confirmed: %s/%s", r.State, r.Authority)
	}
	if got := bodies("payee_account"); !slices.Equal(got, []string{"ACCT-2000"}) {
		t.Errorf("after confirmation list = %q, want [ACCT-2000]", got)
	}
	if !e.visible(alice, ch.ID) || e.visible(alice, old.ID) {
		t.Error("after confirmation the new value must be in force and the old one superseded")
	}
	if _, err := e.svc.Confirm(e.ctx, alice, ch.ID); err == nil {
		t.Error("confirmed twice")
	}
	// Twin: a key that is not sensitive is overwritten at once.
	write("colour", "blue")
	d := write("colour", "green")
	wantState(t, "colour overwrite", d, custody.StateAdmitted, custody.AuthorityUser)
	if got := bodies("colour"); !slices.Equal(got, []string{"green"}) {
		t.Errorf("colour list = %q, want [green]", got)
	}
	if d.Record.Version != 2 {
		t.Errorf("second colour version = %d, want 2", d.Record.Version)
	}
}

// A tenant policy whose only rule errors leaves candidates pending (never
// admitted); fixing the policy re-evaluates them. Another tenant is not
// affected.
func testPolicy(t *testing.T, e *env) {
	alice := e.user("acme", "alice")
	other := e.user("acme-corp", "alice")
	po := e.act(e.principal("acme", "po", []string{"policy_owner"}, nil, nil), "")
	broken := []byte(`@id("broken")
permit (principal, action == Action::"admit", resource)
when { context.no_such_attribute == "x" };
`)
	e.view(func(tx custody.Tx) error {
		if _, err := tx.Policy(e.ctx, "acme"); !isNotFound(err) {
			t.Errorf("policy before any was set: err = %v, want not found", err)
		}
		return nil
	})
	if _, _, err := e.svc.SetPolicy(e.ctx, po, broken); err != nil {
		t.Fatal(err)
	}
	e.view(func(tx custody.Tx) error {
		text, err := tx.Policy(e.ctx, "acme")
		if err != nil || string(text) != string(broken) {
			t.Errorf("stored policy = %q, %v", text, err)
		}
		if _, err := tx.Policy(e.ctx, "acme-corp"); !isNotFound(err) {
			t.Errorf("acme-corp policy: err = %v, want not found", err)
		}
		return nil
	})
	d := e.fact(alice, "pol", "written under a broken policy")
	wantState(t, "broken policy", d, custody.StatePending, custody.AuthorityUser)
	if d.Receipt.Error == "" {
		t.Error("pending receipt carries no error")
	}
	if e.visible(alice, d.ID) {
		t.Error("a pending record is visible")
	}
	twin := e.fact(other, "pol", "acme-corp keeps the server's policy")
	wantState(t, "other tenant", twin, custody.StateAdmitted, custody.AuthorityUser)

	fixed := PolicyText()
	p, changed, err := e.svc.SetPolicy(e.ctx, po, fixed)
	if err != nil {
		t.Fatal(err)
	}
	if p.Version != custody.PolicyVersion(fixed) || !slices.Contains(changed, d.ID) {
		t.Errorf("fixing the policy: version %s, changed %v; want %s and %s", p.Version, changed, custody.PolicyVersion(fixed), d.ID)
	}
	if r := e.record("acme", d.ID); r.State != custody.StateAdmitted || r.Authority != custody.AuthorityUser {
		t.Errorf("re-evaluated record: %s/%s, want admitted/user", r.State, r.Authority)
	}
	if !e.visible(alice, d.ID) {
		t.Error("re-evaluated record is not visible")
	}
	e.verify()
}
