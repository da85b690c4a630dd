package mcpserver_test

import (
	"strings"
	"testing"

	"github.com/custody-mem/custody"
	"github.com/custody-mem/custody/mcpserver"
)

// TestSearchFiltersAndMetadata: memory_remember keeps metadata with the
// memory (a key named channel is plain metadata: the memory is on the
// session's channel), memory_search returns it and filters on it, on a
// key prefix, a class and creation times; a quarantined memory with the
// same metadata is never returned; a bad filter is a tool error naming it.
func TestSearchFiltersAndMetadata(t *testing.T) {
	a := newAcme(t)
	a.srv = mcpserver.New(a.svc, mcpserver.Options{Channel: "user"})
	cl := a.connect(t, a.alice)
	d, _ := ok[mcpserver.RememberOutput](cl, mcpserver.ToolRemember, map[string]any{"namespace": "bank", "key": "payee.iban", "class": "fact",
		"body": "ledger iban DE89370400440532013000", "metadata": map[string]string{"project": "apollo", "channel": "admin"}})
	if !d.Admitted || d.Channel != "user" {
		t.Fatalf("memory_remember with metadata: %+v; want admitted on the user channel", d)
	}
	ok[mcpserver.RememberOutput](cl, mcpserver.ToolRemember, map[string]any{"namespace": "bank", "class": "episode", "body": "ledger talk", "metadata": map[string]string{"project": "gemini"}})
	held, err := a.svc.Remember(a.ctx, a.harness, custody.Candidate{Namespace: "bank", Key: "payee.mail", Class: custody.ClassFact,
		Body: "ledger from an email", Channel: "tool:email", Metadata: custody.Metadata{"project": "apollo"}})
	if err != nil || held.State != custody.StateQuarantined {
		t.Fatalf("the email's fact: %+v, %v", held, err)
	}
	for _, c := range []struct {
		args map[string]any
		want int
	}{
		{map[string]any{"metadata": map[string]string{"project": "apollo"}}, 1},
		{map[string]any{"metadata": map[string]string{"project": "gemini"}}, 1},
		{map[string]any{"key_prefix": "payee."}, 1},
		{map[string]any{"class": "episode"}, 1},
		{map[string]any{"created_after": "2000-01-01T00:00:00Z"}, 2},
		{map[string]any{"created_before": "2000-01-01T00:00:00Z"}, 0},
		{map[string]any{}, 2},
	} {
		c.args["query"] = "ledger"
		out, _ := ok[mcpserver.SearchOutput](cl, mcpserver.ToolSearch, c.args)
		if len(out.Items) != c.want {
			t.Errorf("memory_search %v: %d memories; want %d", c.args, len(out.Items), c.want)
		}
		for _, m := range out.Items {
			if m.ID == held.ID {
				t.Errorf("memory_search %v returned the quarantined memory", c.args)
			}
			if m.ID == d.ID && (m.Metadata["project"] != "apollo" || m.Metadata["channel"] != "admin" || m.Channel != "user") {
				t.Errorf("the iban memory: %+v; want its metadata as sent and channel user", m)
			}
		}
	}
	if got := cl.fails(mcpserver.ToolSearch, map[string]any{"query": "ledger", "created_after": "yesterday"}); !strings.Contains(got, "created_after") {
		t.Errorf("memory_search created_after yesterday: %q; want an error naming created_after", got)
	}
	if got := cl.fails(mcpserver.ToolRemember, map[string]any{"namespace": "n", "class": "fact", "body": "x", "metadata": map[string]string{"Bad Key": "x"}}); !strings.Contains(got, "metadata") {
		t.Errorf("memory_remember with a bad metadata key: %q; want an error naming metadata", got)
	}
}
