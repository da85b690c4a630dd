package main

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/httpapi"
	"github.com/custody-mem/custody/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPStdioRevokedAgentIsTold: an agent's stdio MCP session on the store
// (--db, or --postgres) whose principal is revoked meanwhile answers its
// next tool call with an error saying the token was revoked, not "internal
// error"; one whose token is rotated says so; the session of an agent
// nobody touched keeps working (the twin).
func TestMCPStdioRevokedAgentIsTold(t *testing.T) {
	type backend struct {
		name  string
		flags []string
	}
	bs := []backend{{"sqlite", []string{"--db", filepath.Join(t.TempDir(), "c.db")}}}
	if os.Getenv("CUSTODY_TEST_POSTGRES") != "" {
		bs = append(bs, backend{"postgres", []string{"--postgres", postgresDB(t), "--key", filepath.Join(t.TempDir(), "pg.key")}})
	}
	for _, b := range bs {
		t.Run(b.name, func(t *testing.T) {
			cliOn := func(args ...string) (int, string, string) { return cli(append(args, b.flags...)...) }
			add := func(name string, role ...string) string {
				t.Helper()
				args := []string{"principal", "add", "--tenant", "acme", "--name", name}
				for _, r := range role {
					args = append(args, "--role", r)
				}
				code, tok, msg := cliOn(append(args, "--channel", "agent")...)
				if code != 0 {
					t.Fatalf("principal add %s: %d %s", name, code, msg)
				}
				return strings.TrimSpace(tok)
			}
			add("alice", "user")
			gone, rotated, kept := add("harness", "agent"), add("helper", "agent"), add("other", "agent")
			search := func(cs *mcp.ClientSession) *mcp.CallToolResult {
				t.Helper()
				_, res := callTool[mcpserver.SearchOutput](t, cs, mcpserver.ToolSearch, map[string]any{"query": "tea"})
				return res
			}
			open := func(token string) (*mcp.ClientSession, func() (string, error)) {
				return mcpSession(t, append([]string{"--token", token, "--subject", "alice"}, b.flags...)...)
			}
			csGone, endGone := open(gone)
			csRot, endRot := open(rotated)
			csKept, endKept := open(kept)
			for _, cs := range []*mcp.ClientSession{csGone, csRot, csKept} {
				if res := search(cs); res.IsError {
					t.Fatalf("search before any change: %v", res.Content[0].(*mcp.TextContent).Text)
				}
			}
			if code, _, msg := cliOn("principal", "revoke", "harness", "--tenant", "acme"); code != 0 {
				t.Fatalf("principal revoke: %d %s", code, msg)
			}
			if code, _, msg := cliOn("principal", "rotate", "helper", "--tenant", "acme"); code != 0 {
				t.Fatalf("principal rotate: %d %s", code, msg)
			}
			text := func(res *mcp.CallToolResult) string { return res.Content[0].(*mcp.TextContent).Text }
			if res := search(csGone); !res.IsError || !strings.Contains(text(res), "the token of acme/harness was revoked") || strings.Contains(text(res), "internal error") {
				t.Errorf("the revoked agent's next call: %+v; want an error saying its token was revoked", res.Content)
			}
			if _, res := callTool[mcpserver.RememberOutput](t, csGone, mcpserver.ToolRemember, map[string]any{"namespace": "n", "class": "episode", "body": "tea at noon"}); !res.IsError || !strings.Contains(text(res), "was revoked") {
				t.Errorf("the revoked agent's write: %+v; want it refused as revoked", res.Content)
			}
			if res := search(csRot); !res.IsError || !strings.Contains(text(res), "the token of acme/helper was rotated") {
				t.Errorf("the rotated agent's next call: %+v; want an error saying its token was rotated", res.Content)
			}
			if res := search(csKept); res.IsError {
				t.Errorf("the untouched agent: %s", text(res))
			}
			for _, end := range []func() (string, error){endGone, endRot, endKept} {
				if stderr, err := end(); err != nil {
					t.Errorf("custody mcp returned %v; stderr:\n%s", err, stderr)
				}
			}
		})
	}
}

// With --url, the server's 401 after a revocation is an error saying the
// server no longer accepts the session's token, not "internal error"; the
// twin, a session of an untouched agent, keeps working.
func TestMCPStdioOnServerRevokedAgentIsTold(t *testing.T) {
	ctx := context.Background()
	sf := storeFlags{db: filepath.Join(t.TempDir(), "c.db")}
	svc, st, err := sf.open(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ts := httptest.NewServer(httpapi.New(svc, httpapi.Options{Logger: slog.New(slog.DiscardHandler)}).Handler())
	t.Cleanup(ts.Close)
	token := map[string]string{}
	for _, n := range []string{"alice", "harness", "other"} {
		role := "agent"
		if n == "alice" {
			role = "user"
		}
		_, tok, err := svc.AddPrincipal(ctx, custody.PrincipalInput{Tenant: "acme", Name: n, Roles: []string{role}, Channels: []string{"agent"}})
		if err != nil {
			t.Fatal(err)
		}
		token[n] = tok
	}
	csGone, endGone := mcpSession(t, "--url", ts.URL, "--token", token["harness"], "--subject", "alice")
	csKept, endKept := mcpSession(t, "--url", ts.URL, "--token", token["other"], "--subject", "alice")
	if _, err := svc.RevokePrincipal(ctx, custody.PrincipalAdmin{Tenant: "acme", By: "test"}, "harness", "left"); err != nil {
		t.Fatal(err)
	}
	_, res := callTool[mcpserver.SearchOutput](t, csGone, mcpserver.ToolSearch, map[string]any{"query": "tea"})
	if text := res.Content[0].(*mcp.TextContent).Text; !res.IsError || !strings.Contains(text, "does not accept this MCP session's token (it was revoked") {
		t.Errorf("the revoked agent's next call: %q; want an error saying the token is no longer accepted", text)
	}
	if _, res := callTool[mcpserver.SearchOutput](t, csKept, mcpserver.ToolSearch, map[string]any{"query": "tea"}); res.IsError {
		t.Errorf("the untouched agent: %+v", res.Content)
	}
	for _, end := range []func() (string, error){endGone, endKept} {
		if stderr, err := end(); err != nil {
			t.Errorf("custody mcp returned %v; stderr:\n%s", err, stderr)
		}
	}
}
