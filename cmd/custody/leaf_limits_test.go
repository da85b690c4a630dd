package main

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/mcpserver"
	"github.com/custody-mem/custody/sqlite"
	"github.com/custody-mem/custody/storetest"
	"github.com/custody-mem/custody/tlog"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestReasonLimitCLI: a reason over custody.MaxReasonBytes is refused,
// naming the field and the limit, by custody erase on a server and by
// custody principal revoke on the store; nothing is done. A reason of the
// limit passes (the twin).
func TestReasonLimitCLI(t *testing.T) {
	add := cliServer(t)
	alice := add("alice", []string{"user"})
	over, atLimit := strings.Repeat("w", custody.MaxReasonBytes+1), strings.Repeat("w", custody.MaxReasonBytes)
	id, _ := rememberID(t, alice, "--namespace", "n", "--class", "fact", "an old note")
	_, _, err := run(t, alice, runErase, "--reason", over, id)
	if err == nil || !strings.Contains(err.Error(), "reason") || !strings.Contains(err.Error(), strconv.Itoa(custody.MaxReasonBytes)) {
		t.Fatalf("erase with a reason over the limit: %v; want it refused naming reason and %d", err, custody.MaxReasonBytes)
	}
	if s := mustRun(t, alice, runSearch, "note"); !strings.Contains(s, id) {
		t.Fatalf("the refused erasure erased: %s", s)
	}
	mustRun(t, alice, runErase, "--reason", atLimit, id)

	db := filepath.Join(t.TempDir(), "c.db")
	if code, _, msg := cli("principal", "add", "--db", db, "--tenant", "acme", "--name", "bob", "--role", "user"); code != 0 {
		t.Fatal(msg)
	}
	code, _, msg := cli("principal", "revoke", "bob", "--db", db, "--tenant", "acme", "--reason", over)
	if code == 0 || !strings.Contains(msg, "reason") || !strings.Contains(msg, strconv.Itoa(custody.MaxReasonBytes)) {
		t.Fatalf("principal revoke with a reason over the limit: %d %q", code, msg)
	}
	if code, _, msg := cli("principal", "revoke", "bob", "--db", db, "--tenant", "acme", "--reason", atLimit); code != 0 {
		t.Fatalf("principal revoke with a reason of the limit: %d %s", code, msg)
	}
}

// TestVerifyWarnsOfOversizeEntries: custody verify of a store whose log
// holds an entry longer than an entry bundle can hold (written before
// leaves were bounded) exits 0, since the store and its log agree, and
// warns, naming the tenant and the entry.
func TestVerifyWarnsOfOversizeEntries(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "c.db")
	if code, _, msg := cli("principal", "add", "--db", db, "--tenant", "acme", "--name", "alice", "--role", "user"); code != 0 {
		t.Fatal(msg)
	}
	if code, out, msg := cli("verify", "--db", db); code != 0 || strings.Contains(msg, "longer than") {
		t.Fatalf("verify before: %d %s %s", code, out, msg)
	}
	store, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	key, _, err := tlog.LoadOrCreateServerKey(db + ".key")
	if err != nil {
		t.Fatal(err)
	}
	svc, err := custody.New(store, key, custody.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var alice *custody.Principal
	err = store.View(ctx, func(tx custody.Tx) error {
		var err error
		alice, err = tx.Principal(ctx, "acme", "alice")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	c := &custody.Caller{Principal: alice, Subject: alice}
	d, err := svc.Remember(ctx, c, custody.Candidate{Namespace: "n", Class: custody.ClassFact, Body: "an old address", Channel: "user"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Forget(ctx, c, d.ID, "moved", false); err != nil {
		t.Fatal(err)
	}
	big := storetest.AppendOversizeRetirement(t, store, key, "acme", d.ID)
	store.Close()
	code, out, msg := cli("verify", "--db", db)
	if code != 0 || !strings.Contains(out, "ok:") {
		t.Fatalf("verify of a store with an oversize entry: %d %s %s; want exit 0", code, out, msg)
	}
	want := "WARNING: acme's log holds entries longer than 65535 bytes (indexes " + strconv.FormatUint(big, 10) + ")"
	if !strings.Contains(msg, want) || !strings.Contains(msg, "entry bundle") {
		t.Errorf("verify's warning: %q; want it to hold %q and name the entry bundle", msg, want)
	}
}

// TestGateLeafLimitMCP: a memory_gate call whose log entry would be too
// long (a justification of a hundred long ids) is an invalid-input error
// naming the justification and the limit; a normal call is decided (the
// twin).
func TestGateLeafLimitMCP(t *testing.T) {
	ctx := context.Background()
	sf := storeFlags{db: filepath.Join(t.TempDir(), "c.db")}
	svc, st, err := sf.open(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, token, err := svc.AddPrincipal(ctx, custody.PrincipalInput{Tenant: "acme", Name: "alice", Roles: []string{"user"}, Channels: []string{"user", "agent"}})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	cs, end := mcpSession(t, "--db", sf.db, "--token", token)
	ids := make([]any, 100)
	for i := range ids {
		ids[i] = strconv.Itoa(i) + strings.Repeat("j", 700)
	}
	_, res := callTool[mcpserver.GateOutput](t, cs, mcpserver.ToolGate, map[string]any{"action": "files.write", "args": map[string]any{"path": "a.txt"}, "justification": ids})
	if text := toolText(res); !res.IsError || !strings.Contains(text, "invalid input") || !strings.Contains(text, "65535") || !strings.Contains(text, "justification") {
		t.Errorf("memory_gate with an entry too long: %q; want invalid input naming the justification and the limit", text)
	}
	g, res := callTool[mcpserver.GateOutput](t, cs, mcpserver.ToolGate, map[string]any{"action": "files.write", "args": map[string]any{"path": "a.txt"}})
	if res.IsError || g.Decision == "" {
		t.Errorf("a normal memory_gate: %q", toolText(res))
	}
	if stderr, err := end(); err != nil {
		t.Errorf("custody mcp: %v\n%s", err, stderr)
	}
}

// toolText is the text of a tool result's first content.
func toolText(res *mcp.CallToolResult) string {
	if len(res.Content) == 0 {
		return ""
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); ok {
		return tc.Text
	}
	return ""
}
