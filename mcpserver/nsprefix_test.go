package mcpserver_test

import (
	"strings"
	"testing"

	"github.com/custody-mem/custody"
	"github.com/custody-mem/custody/mcpserver"
)

// TestSearchNamespacePrefix: memory_search with namespace_prefix finds the
// memories in that namespace and below it (work: work, work/notes; not
// workshop); with namespace as well it is a tool error that says so.
func TestSearchNamespacePrefix(t *testing.T) {
	a := newAcme(t)
	for _, ns := range []string{"work", "work/notes", "workshop"} {
		if _, err := a.svc.Remember(a.ctx, a.alice, custody.Candidate{Namespace: ns, Class: custody.ClassFact, Body: "ledger in " + ns, Channel: "user"}); err != nil {
			t.Fatal(err)
		}
	}
	cl := a.connect(t, a.alice)
	out, _ := ok[mcpserver.SearchOutput](cl, mcpserver.ToolSearch, map[string]any{"query": "ledger", "namespace_prefix": "work"})
	if len(out.Items) != 2 {
		t.Errorf("memory_search under work: %+v; want the memories in work and work/notes", out.Items)
	}
	for _, m := range out.Items {
		if m.Namespace != "work" && m.Namespace != "work/notes" {
			t.Errorf("memory_search under work returned one in %s", m.Namespace)
		}
	}
	if got := cl.fails(mcpserver.ToolSearch, map[string]any{"query": "ledger", "namespace": "work", "namespace_prefix": "work"}); !strings.Contains(got, "namespace_prefix") {
		t.Errorf("memory_search with namespace and namespace_prefix: %q; want an error naming namespace_prefix", got)
	}
}
