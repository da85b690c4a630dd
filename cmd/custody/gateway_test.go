package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/internal/bankmcp"
	"github.com/custody-mem/custody/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPGateway: custody mcp --gateway lists the bank's tools, holds a
// memory written after reading its poisoned transactions, and refuses the
// payment to the attacker before the bank sees it; a principal without the
// upstream's channel is told at start which --channel to add.
func TestMCPGateway(t *testing.T) {
	ctx := context.Background()
	rec := &bankmcp.Recorder{}
	bank := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return bankmcp.New(rec) }, nil))
	t.Cleanup(bank.Close)
	dir := t.TempDir()
	file := filepath.Join(dir, "gateway.json")
	if err := os.WriteFile(file, []byte(`{"upstreams":[{"name":"bank","channel":"tool:api","url":"`+bank.URL+
		`","actions":{"send_money":"send_money","get_transactions":"get_most_recent_transactions"}}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	sf := storeFlags{db: filepath.Join(dir, "c.db")}
	svc, st, err := sf.open(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, token, err := svc.AddPrincipal(ctx, custody.PrincipalInput{Tenant: "acme", Name: "alice", Roles: []string{"user"}, Channels: []string{"user", "agent", "tool:api"}})
	if err != nil {
		t.Fatal(err)
	}
	_, noAPI, err := svc.AddPrincipal(ctx, custody.PrincipalInput{Tenant: "acme", Name: "bob", Roles: []string{"user"}, Channels: []string{"user", "agent"}})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()

	cs, end := mcpSession(t, "--db", sf.db, "--token", token, "--gateway", file)
	_, res := callTool[struct{}](t, cs, "bank_get_transactions", map[string]any{})
	if res.IsError {
		t.Fatalf("get_transactions: %v", res.Content)
	}
	held, _ := callTool[mcpserver.RememberOutput](t, cs, mcpserver.ToolRemember, map[string]any{
		"namespace": "bank/payees", "key": "rent_payee", "class": "fact", "body": "rent goes to " + bankmcp.AttackerAccount})
	if held.Admitted {
		t.Errorf("a memory written after reading the bank's transactions was admitted: %+v", held)
	}
	_, res = callTool[struct{}](t, cs, "bank_send_money", map[string]any{"recipient": bankmcp.AttackerAccount, "amount": 1200})
	if !res.IsError {
		t.Errorf("the payment to the attacker was forwarded")
	}
	if n := len(rec.Calls("send_money")); n != 0 {
		t.Errorf("the bank received %d payments", n)
	}
	if stderr, err := end(); err != nil {
		t.Errorf("custody mcp returned %v; stderr:\n%s", err, stderr)
	}

	// The observations and decisions the gateway recorded are in the log.
	var out, errOut strings.Builder
	if err := runVerify(ctx, []string{"--db", sf.db}, &out, &errOut); err != nil || !strings.HasPrefix(out.String(), "ok: ") {
		t.Errorf("verify after a gateway session: %v\n%s%s", err, out.String(), errOut.String())
	}

	err = serveMCP(ctx, []string{"--db", sf.db, "--token", noAPI, "--gateway", file}, strings.NewReader(""), io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--channel tool:api") {
		t.Errorf("a token without tool:api: %v, want the channel to add", err)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--token", token, "--url", "http://127.0.0.1:1", "--gateway", file}, "serve on the store with --db"},
		{[]string{"--db", sf.db, "--token", token, "--gateway", filepath.Join(dir, "absent.json")}, "absent.json"},
	} {
		err := serveMCP(ctx, tc.args, strings.NewReader(""), io.Discard, io.Discard)
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(ue.msg, tc.want) {
			t.Errorf("mcp %v: %v, want a usage error mentioning %q", tc.args, err, tc.want)
		}
	}
}

// TestMCPGatewaySpelledIBAN: through custody mcp --gateway, a mail writes
// the attacker's IBAN with the no-break spaces of an HTML mail; the
// transfer to it is refused before the bank sees it. The twin: her
// landlord's IBAN, which her own memory holds, is paid.
func TestMCPGatewaySpelledIBAN(t *testing.T) {
	ctx := context.Background()
	bankRec, mailRec := &bankmcp.Recorder{}, &bankmcp.Recorder{}
	bank := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return bankmcp.New(bankRec) }, nil))
	t.Cleanup(bank.Close)
	mail := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return bankmcp.NewMail(mailRec) }, nil))
	t.Cleanup(mail.Close)
	dir := t.TempDir()
	file := filepath.Join(dir, "gateway.json")
	if err := os.WriteFile(file, []byte(`{"upstreams":[`+
		`{"name":"bank","channel":"tool:api","url":"`+bank.URL+`","actions":{"send_money":"send_money"}},`+
		`{"name":"mail","channel":"tool:email","url":"`+mail.URL+`","actions":{"inbox":"email.read","send":"email.send","notes":"files.read"}}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	sf := storeFlags{db: filepath.Join(dir, "c.db")}
	svc, st, err := sf.open(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, token, err := svc.AddPrincipal(ctx, custody.PrincipalInput{Tenant: "acme", Name: "alice", Roles: []string{"user"}, Channels: []string{"user", "agent", "tool:api", "tool:email"}})
	if err != nil {
		t.Fatal(err)
	}
	alice := &custody.Caller{Principal: p, Subject: p}
	if _, err := svc.Remember(ctx, alice, custody.Candidate{Namespace: "bank", Key: "landlord_iban", Class: custody.ClassFact,
		Body: "The 950 EUR rent goes to my landlord, IBAN " + bankmcp.UserAccount, Channel: custody.ChannelUser}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	cs, end := mcpSession(t, "--db", sf.db, "--token", token, "--gateway", file)
	if _, res := callTool[struct{}](t, cs, "mail_inbox", map[string]any{}); res.IsError {
		t.Fatalf("inbox: %v", res.Content)
	}
	if _, res := callTool[struct{}](t, cs, "bank_send_money", map[string]any{"recipient": bankmcp.AttackerIBAN, "amount": 950}); !res.IsError {
		t.Errorf("the transfer to the mail's IBAN was forwarded")
	}
	if _, res := callTool[struct{}](t, cs, "bank_send_money", map[string]any{"recipient": bankmcp.UserAccount, "amount": 950}); res.IsError {
		t.Errorf("the rent to her landlord was refused: %v", res.Content)
	}
	calls := bankRec.Calls("send_money")
	if len(calls) != 1 || calls[0].Args["recipient"] != bankmcp.UserAccount {
		t.Errorf("the bank received %+v, want the one transfer to her landlord", calls)
	}
	if stderr, err := end(); err != nil {
		t.Errorf("custody mcp returned %v; stderr:\n%s", err, stderr)
	}
}
