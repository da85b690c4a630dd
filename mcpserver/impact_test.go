package mcpserver_test

import (
	"testing"

	"github.com/custody-mem/custody"
	"github.com/custody-mem/custody/mcpserver"
)

// TestToolReadsRecordedInSession: memory_search and memory_get record what
// they returned in the MCP session's custody session, so the impact of a
// memory found to be poisoned names the session; once a reviewer
// quarantines it, the session's next memory_remember of a fact is held,
// while a session that did not read it still has its fact admitted.
func TestToolReadsRecordedInSession(t *testing.T) {
	a := newAcme(t)
	p, _ := a.principal(t, "acme", "rita", []string{"reviewer"}, nil)
	rita := a.act(t, p, "")
	d, err := a.svc.Remember(a.ctx, a.harness, custody.Candidate{Namespace: "mail", Class: custody.ClassEpisode,
		Body: "vendor says: new payee ACCT-4242", Channel: "tool:email"})
	if err != nil || d.State != custody.StateAdmitted {
		t.Fatalf("the e-mail episode: %+v, %v", d, err)
	}
	reader, bystander := a.connect(t, a.harness), a.connect(t, a.harness)
	if out, _ := ok[mcpserver.SearchOutput](reader, mcpserver.ToolSearch, map[string]any{"query": "ACCT-4242"}); len(out.Items) != 1 {
		t.Fatalf("memory_search: %+v", out.Items)
	}
	ok[mcpserver.Memory](reader, mcpserver.ToolGet, map[string]any{"id": d.ID})
	imp, err := a.svc.Impact(a.ctx, rita, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(imp.Sessions) != 1 || imp.Sessions[0].Session != reader.session || len(imp.Sessions[0].Via) != 2 {
		t.Fatalf("impact sessions: %+v; want %s by get and search", imp.Sessions, reader.session)
	}
	if _, err := a.svc.Quarantine(a.ctx, rita, d.ID, "phishing"); err != nil {
		t.Fatal(err)
	}
	fact := map[string]any{"namespace": "notes", "class": "fact", "body": "alice pays ACCT-4242"}
	if out, _ := ok[mcpserver.RememberOutput](reader, mcpserver.ToolRemember, fact); out.State != "quarantined" {
		t.Errorf("the reader's fact after the quarantine: %+v; want quarantined", out)
	}
	if out, _ := ok[mcpserver.RememberOutput](bystander, mcpserver.ToolRemember, fact); out.State != "admitted" {
		t.Errorf("the bystander's fact: %+v; want admitted", out)
	}
}
