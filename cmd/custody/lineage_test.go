package main

import (
	"strings"
	"testing"
)

func TestLineage(t *testing.T) {
	principal := cliServer(t)
	alice := principal("alice", []string{"user"})
	a, _ := rememberID(t, alice, "--namespace", "notes", "--class", "episode", "call with the bank")
	b, _ := rememberID(t, alice, "--namespace", "notes", "--class", "episode", "bank confirmed the account")
	sum, _ := rememberID(t, alice, "--namespace", "summaries", "--class", "episode", "--derived-from", a+"=1", "--derived-from", b+"=0.1", "the bank call")
	top, _ := rememberID(t, alice, "--namespace", "summaries", "--key", "weekly", "--class", "episode", "--derived-from", sum+"=0.8", "the week")

	out := mustRun(t, alice, runLineage, sum)
	for _, s := range []string{
		sum + "  summaries  episode  admitted  authority=user  channel=user",
		"├─ " + a + "  notes  weight 1.00  admitted  authority=user  channel=user",
		"└─ " + b + "  notes  weight 0.10",
		"descendants (derived from it):\n  └─ " + top + "  summaries/weekly  weight 0.80",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("lineage printed\n%s\nwithout %q", out, s)
		}
	}
	out = mustRun(t, alice, runLineage, a)
	if !strings.Contains(out, "ancestors (derived from): none") || !strings.Contains(out, "     └─ "+top) {
		t.Errorf("lineage of a root:\n%s", out)
	}
	if out := mustRun(t, alice, runLineage, "--json", a); !strings.Contains(out, `"descendants"`) {
		t.Errorf("lineage --json:\n%s", out)
	}
}
