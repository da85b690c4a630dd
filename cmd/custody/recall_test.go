package main

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestRecall(t *testing.T) {
	principal := cliServer(t)
	alice := principal("alice", []string{"user"})
	harness := principal("harness", []string{"agent"}, "agent")
	id, _ := rememberID(t, alice, "--namespace", "profile", "--key", "tea", "--class", "preference", "green tea, no sugar")
	rememberID(t, alice, "--namespace", "work", "--class", "episode", "met the auditors")

	out := mustRun(t, alice, runRecall)
	if !strings.HasPrefix(out, "ID ") || !strings.Contains(out, "profile/tea") || !strings.Contains(out, "met the auditors") {
		t.Fatalf("recall list:\n%s", out)
	}
	out = mustRun(t, harness, runRecall, "--namespace", "profile", "--subject", "alice")
	if !strings.Contains(out, "green tea") || strings.Contains(out, "auditors") {
		t.Fatalf("recall --namespace profile:\n%s", out)
	}
	out = mustRun(t, alice, runRecall, id)
	for _, s := range []string{"authority  user", "channel    user", "writer     acme/alice", "\ngreen tea, no sugar\n"} {
		if !strings.Contains(out, s) {
			t.Errorf("recall ID printed\n%s\nwithout %q", out, s)
		}
	}
	out = mustRun(t, alice, runRecall, id, "--history")
	if !strings.Contains(out, "VERSION") || !strings.Contains(out, "admitted by") {
		t.Fatalf("recall --history:\n%s", out)
	}
	var page struct {
		Items      []map[string]any `json:"items"`
		NextCursor string           `json:"next_cursor"`
	}
	out = mustRun(t, alice, runRecall, "--json", "--limit", "1")
	if err := json.Unmarshal([]byte(out), &page); err != nil || len(page.Items) != 1 || page.NextCursor == "" {
		t.Fatalf("recall --json --limit 1: %v\n%s", err, out)
	}
	out = mustRun(t, alice, runRecall, "--json", "--cursor", page.NextCursor)
	if err := json.Unmarshal([]byte(out), &page); err != nil || len(page.Items) != 1 {
		t.Fatalf("second page: %v\n%s", err, out)
	}
	if _, _, err := run(t, harness, runRecall, id); err == nil || !strings.Contains(err.Error(), "subject") {
		t.Fatalf("an agent without --subject: %v", err)
	}
	if _, _, err := run(t, alice, runRecall, "01ARZ3NDEKTSV4RRFFQ69G5FAV"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("absent id: %v", err)
	}
	var ue usageError
	if _, _, err := run(t, alice, runRecall, "a", "b"); !errors.As(err, &ue) {
		t.Fatalf("two ids: %v", err)
	}
}
