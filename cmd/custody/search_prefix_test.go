package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// custody search --namespace-prefix keeps the namespace and those below
// it, not a namespace that merely starts with the same letters; with
// --namespace as well the server's refusal is reported.
func TestSearchNamespacePrefix(t *testing.T) {
	principal := cliServer(t)
	alice := principal("alice", []string{"user"})
	for _, ns := range []string{"work", "work/notes", "workshop"} {
		rememberID(t, alice, "--namespace", ns, "--class", "fact", "ledger kept in "+ns)
	}
	out := mustRun(t, alice, runSearch, "--json", "--namespace-prefix", "work", "ledger")
	var res struct {
		Items []struct {
			Namespace string `json:"namespace"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("search --json: %v\n%s", err, out)
	}
	var got []string
	for _, it := range res.Items {
		got = append(got, it.Namespace)
	}
	slices.Sort(got)
	if want := []string{"work", "work/notes"}; !slices.Equal(got, want) {
		t.Errorf("search under work: %v; want %v", got, want)
	}
	if _, _, err := run(t, alice, runSearch, "--namespace", "work", "--namespace-prefix", "work", "ledger"); err == nil || !strings.Contains(err.Error(), "namespace_prefix") {
		t.Errorf("search with both: %v; want the server's refusal naming namespace_prefix", err)
	}
}
