package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/mcpserver"
	"github.com/custody-mem/custody/memgraph"
	"github.com/custody-mem/custody/sqlite"
	"github.com/custody-mem/custody/tlog"
)

// cli runs custody with args and returns its exit code and output.
func cli(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := execute(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// authenticate opens the store at db and reports whether token names a
// principal of it.
func authenticate(t *testing.T, db, token string) error {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	key, _, err := tlog.LoadOrCreateServerKey(db + ".key")
	if err != nil {
		t.Fatal(err)
	}
	svc, err := custody.New(st, key, custody.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = svc.Authenticate(ctx, token)
	return err
}

// TestPrincipalLifecycleOffline: on the store itself, list and show print
// no token material, update and rotate take effect, revoke refuses the
// token, and the store verifies after each change.
func TestPrincipalLifecycleOffline(t *testing.T) {
	db := filepath.Join(t.TempDir(), "c.db")
	code, alice, msg := cli("principal", "add", "--db", db, "--tenant", "acme", "--name", "alice", "--role", "user")
	if code != 0 {
		t.Fatalf("principal add: %d %s", code, msg)
	}
	alice = strings.TrimSpace(alice)
	if code, _, msg := cli("principal", "add", "--db", db, "--tenant", "acme", "--name", "bob", "--role", "user"); code != 0 {
		t.Fatalf("principal add bob: %d %s", code, msg)
	}
	code, out, msg := cli("principal", "list", "--db", db, "--tenant", "acme")
	if code != 0 || !strings.Contains(out, "NAME") || !strings.Contains(out, "alice") || !strings.Contains(out, "active") || strings.Contains(out, alice) {
		t.Fatalf("principal list: %d %q %s", code, out, msg)
	}
	code, out, msg = cli("principal", "update", "alice", "--db", db, "--tenant", "acme", "--channel", "user", "--channel", "agent", "--group", "finance", "--json")
	var info custody.PrincipalInfo
	if code != 0 || json.Unmarshal([]byte(out), &info) != nil || strings.Join(info.Channels, ",") != "user,agent" || strings.Join(info.Groups, ",") != "finance" {
		t.Fatalf("principal update: %d %q %s", code, out, msg)
	}
	code, rotated, msg := cli("principal", "rotate", "alice", "--db", db, "--tenant", "acme", "--reason", "token lost")
	rotated = strings.TrimSpace(rotated)
	if code != 0 || !strings.HasPrefix(rotated, "cst_") || rotated == alice || !strings.Contains(msg, "shown once") {
		t.Fatalf("principal rotate: %d %q %s", code, rotated, msg)
	}
	if err := authenticate(t, db, alice); !errors.Is(err, custody.ErrUnauthenticated) {
		t.Fatalf("the old token after rotate: %v; want it refused", err)
	}
	if err := authenticate(t, db, rotated); err != nil {
		t.Fatalf("the new token after rotate: %v", err)
	}
	if code, _, msg := cli("verify", "--db", db); code != 0 {
		t.Fatalf("verify after update and rotate: %d %s", code, msg)
	}
	code, out, msg = cli("principal", "revoke", "alice", "--db", db, "--tenant", "acme")
	if code != 0 || !strings.Contains(out, "revoked") {
		t.Fatalf("principal revoke: %d %q %s", code, out, msg)
	}
	if err := authenticate(t, db, rotated); !errors.Is(err, custody.ErrUnauthenticated) {
		t.Fatalf("the token after revoke: %v; want it refused", err)
	}
	code, out, _ = cli("principal", "show", "bob", "--db", db, "--tenant", "acme", "--json")
	if code != 0 || json.Unmarshal([]byte(out), &info) != nil || info.Status != "active" {
		t.Fatalf("bob, untouched: %d %q", code, out)
	}
	if code, _, msg := cli("verify", "--db", db); code != 0 {
		t.Fatalf("verify after revoke: %d %s", code, msg)
	}
	if code, _, msg := cli("principal", "rotate", "alice", "--db", db, "--tenant", "acme"); code != 1 || !strings.Contains(msg, "revoked") {
		t.Fatalf("rotating a revoked principal: %d %s; want a refusal", code, msg)
	}
	if code, _, msg := cli("principal", "list", "--db", db); code != 2 || !strings.Contains(msg, "--tenant") {
		t.Fatalf("list on a store without --tenant: %d %s", code, msg)
	}
}

// TestPrincipalLifecycleServer: against a running server with an admin's
// token, rotate prints a new token and the old one is refused; a user's
// token is refused the admin verbs.
func TestPrincipalLifecycleServer(t *testing.T) {
	add := cliServer(t)
	root := add("root", []string{"admin"})
	bob := add("bob", []string{"user"})
	out := mustRun(t, root, runPrincipal, "list")
	if !strings.Contains(out, "bob") || !strings.Contains(out, "root") {
		t.Fatalf("principal list: %q", out)
	}
	if _, msg, err := run(t, bob, runPrincipal, "list"); err == nil {
		t.Fatalf("a user's principal list succeeded: %s", msg)
	}
	mustRun(t, bob, runSearch, "tea")
	newTok := strings.TrimSpace(mustRun(t, root, runPrincipal, "rotate", "bob"))
	if !strings.HasPrefix(newTok, "cst_") || newTok == bob {
		t.Fatalf("rotate printed %q", newTok)
	}
	if _, _, err := run(t, bob, runSearch, "tea"); err == nil || !strings.Contains(err.Error(), "401") && !strings.Contains(strings.ToLower(err.Error()), "token") {
		t.Fatalf("the old token after rotate: %v; want it refused", err)
	}
	mustRun(t, newTok, runSearch, "tea")
	out = mustRun(t, root, runPrincipal, "update", "bob", "--role", "user", "--role", "reviewer", "--json")
	var info custody.PrincipalInfo
	if json.Unmarshal([]byte(out), &info) != nil || strings.Join(info.Roles, ",") != "user,reviewer" {
		t.Fatalf("update: %q", out)
	}
	mustRun(t, newTok, runReview)
	mustRun(t, root, runPrincipal, "revoke", "bob")
	if _, _, err := run(t, newTok, runSearch, "tea"); err == nil {
		t.Fatal("the token after revoke still searches")
	}
}

// TestPrincipalAdminHelp: each subcommand has its usage.
func TestPrincipalAdminHelp(t *testing.T) {
	for _, sub := range []string{"list", "show", "update", "rotate", "revoke"} {
		code, _, msg := cli("principal", sub, "-h")
		if code != 0 || !strings.Contains(msg, "Usage: custody principal "+sub) || !strings.Contains(msg, "-json") {
			t.Errorf("principal %s -h: %d %s", sub, code, msg)
		}
	}
	if code, _, msg := cli("principal", "show"); code != 2 || !strings.Contains(msg, "exactly one principal name") {
		t.Errorf("principal show without a name: %d %s", code, msg)
	}
}

// TestMCPStdioRevoked: the stdio server on a store refuses the tools from
// the next call on once its principal is revoked on the same store; the
// call before the revocation works.
func TestMCPStdioRevoked(t *testing.T) {
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
	defer st.Close()
	cs, end := mcpSession(t, "--db", sf.db, "--token", token)
	defer end()
	if _, res := callTool[mcpserver.SearchOutput](t, cs, mcpserver.ToolSearch, map[string]any{"query": "answers"}); res.IsError {
		t.Fatalf("search before the revocation: %+v", res.Content)
	}
	if _, err := svc.RevokePrincipal(ctx, custody.PrincipalAdmin{Tenant: "acme", By: cliOperator}, "alice", ""); err != nil {
		t.Fatal(err)
	}
	if _, res := callTool[mcpserver.SearchOutput](t, cs, mcpserver.ToolSearch, map[string]any{"query": "answers"}); !res.IsError {
		t.Fatalf("search after the revocation succeeded: %+v", res.StructuredContent)
	}
	if _, res := callTool[mcpserver.RememberOutput](t, cs, mcpserver.ToolRemember, map[string]any{"namespace": "n", "class": "fact", "body": "after revoke"}); !res.IsError {
		t.Fatalf("remember after the revocation succeeded: %+v", res.StructuredContent)
	}
}

// TestMCPMemoryGraphStdioRevoked: custody mcp --memory-graph on a store
// refuses its tools from the next call on once its principal is revoked,
// as the plain tools do; the calls before the revocation work.
func TestMCPMemoryGraphStdioRevoked(t *testing.T) {
	ctx := context.Background()
	sf := storeFlags{db: filepath.Join(t.TempDir(), "c.db")}
	svc, st, err := sf.open(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	_, token, err := svc.AddPrincipal(ctx, custody.PrincipalInput{Tenant: "acme", Name: "alice", Roles: []string{"user"}, Channels: []string{"user", "agent"}})
	if err != nil {
		t.Fatal(err)
	}
	cs, end := mcpSession(t, "--memory-graph", "--db", sf.db, "--token", token)
	defer end()
	entity := map[string]any{"entities": []any{map[string]any{"name": "Alice", "entityType": "person", "observations": []string{"likes tea"}}}}
	if _, res := callTool[memgraph.KnowledgeGraph](t, cs, "create_entities", entity); res.IsError {
		t.Fatalf("create_entities before the revocation: %+v", res.Content)
	}
	if kg, res := callTool[memgraph.KnowledgeGraph](t, cs, "read_graph", map[string]any{}); res.IsError || len(kg.Entities) != 1 {
		t.Fatalf("read_graph before the revocation: %+v (error %v)", kg, res.IsError)
	}
	if _, err := svc.RevokePrincipal(ctx, custody.PrincipalAdmin{Tenant: "acme", By: cliOperator}, "alice", ""); err != nil {
		t.Fatal(err)
	}
	if _, res := callTool[memgraph.KnowledgeGraph](t, cs, "read_graph", map[string]any{}); !res.IsError {
		t.Fatal("read_graph after the revocation succeeded")
	}
	entity["entities"] = []any{map[string]any{"name": "Bob", "entityType": "person", "observations": []string{"after revoke"}}}
	if _, res := callTool[memgraph.KnowledgeGraph](t, cs, "create_entities", entity); !res.IsError {
		t.Fatal("create_entities after the revocation succeeded")
	}
}
