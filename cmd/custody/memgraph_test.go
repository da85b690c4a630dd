package main

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/memgraph"
)

func TestMCPMemoryGraph(t *testing.T) {
	ctx := context.Background()
	sf := storeFlags{db: filepath.Join(t.TempDir(), "c.db"), origin: custody.DefaultLogOrigin}
	svc, st, err := sf.open(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, token, err := svc.AddPrincipal(ctx, custody.PrincipalInput{Tenant: "acme", Name: "alice", Roles: []string{"user"}, Channels: []string{"user", "agent"}})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()

	cs, end := mcpSession(t, "--memory-graph", "--db", sf.db, "--token", token)
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	want := []string{"add_observations", "create_entities", "create_relations", "delete_entities", "delete_observations",
		"delete_relations", "open_nodes", "read_graph", "search_nodes"}
	if !slices.Equal(names, want) {
		t.Fatalf("tools = %v, want %v", names, want)
	}
	callTool[memgraph.KnowledgeGraph](t, cs, "create_entities", map[string]any{"entities": []any{
		map[string]any{"name": "Alice", "entityType": "person", "observations": []string{"likes tea"}}}})
	kg, res := callTool[memgraph.KnowledgeGraph](t, cs, "read_graph", map[string]any{})
	if res.IsError || len(kg.Entities) != 1 || kg.Entities[0].Name != "Alice" || !slices.Equal(kg.Entities[0].Observations, []string{"likes tea"}) {
		t.Fatalf("read_graph = %+v (error %v)", kg, res.IsError)
	}
	if stderr, err := end(); err != nil {
		t.Fatalf("custody mcp --memory-graph returned %v; stderr:\n%s", err, stderr)
	}

	// The entity is a memory of alice on the agent channel.
	svc, st, err = sf.open(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c, err := svc.Act(ctx, p, "")
	if err != nil {
		t.Fatal(err)
	}
	page, err := svc.List(ctx, c, custody.ListInput{Namespace: "graph/entities"})
	if err != nil || len(page.Items) != 1 || page.Items[0].Channel != "agent" || page.Items[0].Writer != "acme/alice" {
		t.Fatalf("graph/entities = %+v, %v", page, err)
	}

	err = serveMCP(ctx, []string{"--memory-graph", "--token", token, "--url", "http://127.0.0.1:1"}, strings.NewReader(""), io.Discard, io.Discard)
	var ue usageError
	if !errors.As(err, &ue) || !strings.Contains(ue.msg, "--memory-graph") {
		t.Errorf("--memory-graph --url: %v, want a usage error", err)
	}
}
