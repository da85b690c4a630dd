package main

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/httpapi"
	"github.com/custody-mem/custody/mcpserver"
)

// custody mcp records what memory_search and memory_get return in the MCP
// session's custody session, on a store (--db) and on a server (--url):
// the memory's impact names that session.
func TestMCPStdioRecordsReads(t *testing.T) {
	ctx := context.Background()
	sf := storeFlags{db: filepath.Join(t.TempDir(), "c.db")}
	svc, st, err := sf.open(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ts := httptest.NewServer(httpapi.New(svc, httpapi.Options{Logger: slog.New(slog.DiscardHandler)}).Handler())
	t.Cleanup(ts.Close)
	ap, _, err := svc.AddPrincipal(ctx, custody.PrincipalInput{Tenant: "acme", Name: "alice", Roles: []string{"user"}})
	if err != nil {
		t.Fatal(err)
	}
	_, harness, err := svc.AddPrincipal(ctx, custody.PrincipalInput{Tenant: "acme", Name: "harness", Roles: []string{"agent"}, Channels: []string{"agent"}})
	if err != nil {
		t.Fatal(err)
	}
	rp, _, err := svc.AddPrincipal(ctx, custody.PrincipalInput{Tenant: "acme", Name: "rita", Roles: []string{"reviewer"}})
	if err != nil {
		t.Fatal(err)
	}
	alice, err := svc.Act(ctx, ap, "")
	if err != nil {
		t.Fatal(err)
	}
	rita, err := svc.Act(ctx, rp, "")
	if err != nil {
		t.Fatal(err)
	}
	d, err := svc.Remember(ctx, alice, custody.Candidate{Namespace: "bank", Class: "fact", Body: "the landlord's account is ACCT-2001", Channel: "user"})
	if err != nil {
		t.Fatal(err)
	}
	for name, args := range map[string][]string{
		"store":  {"--db", sf.db, "--token", harness, "--subject", "alice"},
		"server": {"--url", ts.URL, "--token", harness, "--subject", "alice"},
	} {
		t.Run(name, func(t *testing.T) {
			cs, end := mcpSession(t, args...)
			m := regexp.MustCompile(`custody session: (\S+)`).FindStringSubmatch(cs.InitializeResult().Instructions)
			if m == nil {
				t.Fatalf("instructions name no session: %q", cs.InitializeResult().Instructions)
			}
			if s, _ := callTool[mcpserver.SearchOutput](t, cs, mcpserver.ToolSearch, map[string]any{"query": "landlord"}); len(s.Items) != 1 {
				t.Fatalf("search = %+v", s.Items)
			}
			callTool[mcpserver.Memory](t, cs, mcpserver.ToolGet, map[string]any{"id": d.ID})
			if stderr, err := end(); err != nil {
				t.Errorf("custody mcp returned %v; stderr:\n%s", err, stderr)
			}
			imp, err := svc.Impact(ctx, rita, d.ID)
			if err != nil {
				t.Fatal(err)
			}
			var via []string
			for _, s := range imp.Sessions {
				if s.Session == m[1] {
					via = s.Via
				}
			}
			if len(via) != 2 || via[0] != "get" || via[1] != "search" {
				t.Errorf("impact sessions %+v; want %s by get and search", imp.Sessions, m[1])
			}
		})
	}
}
