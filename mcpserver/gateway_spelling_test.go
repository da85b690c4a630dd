package mcpserver_test

import (
	"encoding/json"
	"strings"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/internal/bankmcp"
	"github.com/custody-mem/custody/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
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

var accountSpec = upstreamSpec{name: "acct", channel: "tool:file", server: bankmcp.NewAccount, reviewed: true,
	actions: `{"read_file":"read_file","update_user_info":"update_user_info","send_money":"send_money"}`}

// TestGatewayEndorseThroughElicitation: the user asked the agent to apply
// the address in a file. The update asks her (the address comes from the
// file); she confirms and says her request named the file, which endorses
// it for update_user_info in the session: the update runs, a second one
// from the same file runs without asking, and the payment the same file
// asks for is refused. The twin: confirming without endorsing runs that
// one update only, and the next asks again.
func TestGatewayEndorseThroughElicitation(t *testing.T) {
	address := map[string]any{"street": "Dalton Street 123", "city": "San Francisco", "zip": "94105"}
	for _, endorse := range []bool{true, false} {
		f := newGatewayFixture(t, accountSpec)
		var asked []*mcp.ElicitParams
		cl := f.session(t, func(r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked = append(asked, r.Params)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true, "endorse": endorse}}, nil
		})
		if res := cl.call("acct_read_file", map[string]any{"path": "address-change.txt"}); res.IsError {
			t.Fatalf("read_file: %q", text(res))
		}
		if res := cl.call("acct_update_user_info", address); res.IsError {
			t.Fatalf("endorse %v: the update she confirmed: %q", endorse, text(res))
		}
		if len(asked) != 1 || !strings.Contains(schemaText(asked[0]), "acct/read_file/") {
			t.Fatalf("endorse %v: asked %d times, schema %s; want one question offering the file as a source", endorse, len(asked), schemaText(asked[0]))
		}
		again := map[string]any{"street": "Dalton Street 123", "city": "San Francisco"}
		if res := cl.call("acct_update_user_info", again); res.IsError {
			t.Fatalf("endorse %v: the second update: %q", endorse, text(res))
		}
		if want := map[bool]int{true: 1, false: 2}[endorse]; len(asked) != want {
			t.Errorf("endorse %v: asked %d times, want %d", endorse, len(asked), want)
		}
		msg := cl.fails("acct_send_money", map[string]any{"recipient": bankmcp.AttackerIBAN, "amount": 950})
		if !strings.Contains(msg, "denied by custody") || len(f.recs["acct"].Calls("send_money")) != 0 {
			t.Errorf("endorse %v: the payment the file asks for: %q, want refused and not sent", endorse, msg)
		}
		if n := len(f.recs["acct"].Calls("update_user_info")); n != 2 {
			t.Errorf("endorse %v: %d updates reached the service, want 2", endorse, n)
		}
		if _, err := f.svc.Verify(f.ctx, custody.VerifyOptions{}); err != nil {
			t.Errorf("endorse %v: verify: %v", endorse, err)
		}
	}
}

func schemaText(p *mcp.ElicitParams) string {
	if p == nil {
		return ""
	}
	b, _ := json.Marshal(p.RequestedSchema)
	return string(b)
}
