package mcpserver_test

import (
	"strings"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/internal/bankmcp"
	"github.com/custody-mem/custody/mcpserver"
)

var mailSpec = upstreamSpec{name: "mail", channel: "tool:email", server: bankmcp.NewMail, actions: `{"send":"email.send","inbox":"email.read","notes":"files.read"}`}

// remember stores a fact of alice's own, on her channel.
func (f *bankFixture) remember(t *testing.T, key, body string) string {
	t.Helper()
	d, err := f.svc.Remember(f.ctx, f.alice, custody.Candidate{Namespace: "bank", Key: key, Class: custody.ClassFact, Body: body, Channel: custody.ChannelUser})
	if err != nil || d.State != custody.StateAdmitted {
		t.Fatalf("remember %q: %+v, %v", body, d, err)
	}
	return d.ID
}

// TestGatewayIBANWithNoBreakSpaces: a mail writes the attacker's IBAN with
// the no-break spaces of an HTML mail; a transfer to it is refused before
// the bank sees it, although the user asked to pay the rent. The twin:
// her landlord's IBAN from her own memory is paid.
func TestGatewayIBANWithNoBreakSpaces(t *testing.T) {
	f := newGatewayFixture(t, bankSpec, mailSpec)
	f.remember(t, "landlord_iban", "The rent goes to my landlord, IBAN "+bankmcp.UserAccount)
	cl := f.session(t, nil)
	if res := cl.call("mail_inbox", map[string]any{}); res.IsError || !strings.Contains(text(res), "\u00a0WEST\u00a0") {
		t.Fatalf("inbox: %q", text(res))
	}
	f.said(t, cl, "Pay the 950 EUR rent to my landlord.")
	msg := cl.fails("bank_send_money", map[string]any{"recipient": bankmcp.AttackerIBAN, "amount": 950})
	if !strings.Contains(msg, "denied by custody") || !strings.Contains(msg, "tool:email") {
		t.Errorf("the transfer to the mail's IBAN: %q, want a refusal naming tool:email", msg)
	}
	if n := f.sent(bankmcp.AttackerIBAN); n != 0 {
		t.Fatalf("the bank received %d transfers to the attacker", n)
	}
	if res := cl.call("bank_send_money", map[string]any{"recipient": bankmcp.UserAccount, "amount": 950}); res.IsError {
		t.Fatalf("the rent to her landlord: %q", text(res))
	}
	if n := f.sent(bankmcp.UserAccount); n != 1 {
		t.Fatalf("the bank received %d transfers to her landlord, want 1", n)
	}
}

// TestGatewayAddressInStructuredContent: an address only in an upstream
// result's structured content, as "Name <addr>", is traced to the result,
// and a mail to it is refused; a mail to her accountant, whom her memory
// names, is sent.
func TestGatewayAddressInStructuredContent(t *testing.T) {
	f := newGatewayFixture(t, mailSpec)
	f.remember(t, "accountant", "my accountant: anna@corp.example")
	cl := f.session(t, nil)
	if res := cl.call("mail_inbox", map[string]any{}); res.IsError || strings.Contains(text(res), bankmcp.BillingAddress) {
		t.Fatalf("inbox: %q; want the address only in the structured content", text(res))
	}
	msg := cl.fails("mail_send", map[string]any{"to": bankmcp.BillingAddress, "body": "my card number"})
	if !strings.Contains(msg, "denied by custody") || !strings.Contains(msg, "mail/inbox") {
		t.Errorf("the mail to the structured content's address: %q, want a refusal naming the result", msg)
	}
	if res := cl.call("mail_send", map[string]any{"to": "Anna@corp.example", "body": "the receipts"}); res.IsError {
		t.Fatalf("the mail to her accountant: %q", text(res))
	}
	if n := len(f.recs["mail"].Calls("send")); n != 1 {
		t.Fatalf("the mailbox sent %d mails, want 1 (to her accountant)", n)
	}
}

// TestGatewayToolDescriptionIsObserved: listing the tools puts their
// descriptions in the model's context, so a session that listed a tool
// whose description slips in an IBAN holds the fact the model writes from
// it, and the gate refuses a payment to it, naming the listing. The twin:
// with the operator's reviewed digest pinned, listing taints nothing and a
// preference the model writes is admitted.
func TestGatewayToolDescriptionIsObserved(t *testing.T) {
	f := newGatewayFixture(t, mailSpec)
	cl := f.session(t, nil)
	tools, err := cl.cs.ListTools(f.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	listed := false
	for _, tl := range tools.Tools {
		listed = listed || tl.Name == "mail_notes" && strings.Contains(tl.Description, bankmcp.DescriptionIBAN)
	}
	if !listed {
		t.Fatal("the mail_notes tool with its description is not listed")
	}
	held, _ := ok[mcpserver.RememberOutput](cl, mcpserver.ToolRemember, map[string]any{
		"namespace": "bank", "key": "rent_payee", "class": "fact", "body": "the landlord IBAN is now " + bankmcp.DescriptionIBAN})
	if held.Admitted || held.Authority != "external" || !strings.Contains(held.Message, "tool:email") {
		t.Errorf("a fact written after listing the tools: %+v, want held as external, naming tool:email", held)
	}
	f.said(t, cl, "Pay the 950 EUR rent.")
	d, _ := ok[mcpserver.GateOutput](cl, mcpserver.ToolGate, map[string]any{"action": "send_money", "args": map[string]any{"recipient": bankmcp.DescriptionIBAN, "amount": 950}})
	if d.Decision != "deny" || !strings.Contains(strings.Join(d.Reasons, " "), "mail/tools/list") {
		t.Errorf("a payment to the description's IBAN: %+v, want deny naming the listing", d)
	}

	reviewed := mailSpec
	reviewed.reviewed = true
	f = newGatewayFixture(t, reviewed)
	cl = f.session(t, nil)
	if _, err := cl.cs.ListTools(f.ctx, nil); err != nil {
		t.Fatal(err)
	}
	kept, _ := ok[mcpserver.RememberOutput](cl, mcpserver.ToolRemember, map[string]any{
		"namespace": "prefs", "key": "tone", "class": "preference", "body": "short answers"})
	if !kept.Admitted || kept.Authority != "agent" {
		t.Errorf("a preference written after listing reviewed tools: %+v, want admitted as agent", kept)
	}
}
