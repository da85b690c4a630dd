package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

// custody remember --metadata stores the pairs with the record (recall
// --json returns them, recall prints them), and recall and search take
// --key-prefix, --created-after/--created-before and --metadata filters,
// each keeping only what matches; a malformed pair is a usage error and
// the server's refusal of a bad time is reported.
func TestFilterFlags(t *testing.T) {
	principal := cliServer(t)
	alice := principal("alice", []string{"user"})
	start := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	iban, _ := rememberID(t, alice, "--namespace", "bank", "--key", "payee.iban", "--class", "fact", "--metadata", "project=apollo", "--metadata", "lang=en", "ledger iban")
	rememberID(t, alice, "--namespace", "bank", "--key", "payee.name", "--class", "fact", "--metadata", "project=gemini", "ledger name")
	tone, _ := rememberID(t, alice, "--namespace", "prefs", "--key", "tone", "--class", "preference", "--metadata", "project=apollo", "ledger tone")

	ids := func(out string) []string {
		t.Helper()
		var res struct {
			Items []struct {
				ID       string            `json:"id"`
				Metadata map[string]string `json:"metadata"`
			} `json:"items"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("--json: %v\n%s", err, out)
		}
		var got []string
		for _, it := range res.Items {
			got = append(got, it.ID)
			if it.ID == iban && (it.Metadata["project"] != "apollo" || it.Metadata["lang"] != "en") {
				t.Errorf("the iban record's metadata: %v", it.Metadata)
			}
		}
		slices.Sort(got)
		return got
	}
	sorted := func(s ...string) []string { slices.Sort(s); return s }
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--metadata", "project=apollo"}, sorted(iban, tone)},
		{[]string{"--metadata", "project=apollo", "--metadata", "lang=en"}, []string{iban}},
		{[]string{"--metadata", "project=apollo", "--key-prefix", "payee."}, []string{iban}},
		{[]string{"--metadata", "project=mercury"}, nil},
		{[]string{"--metadata", "project=apollo", "--created-after", start}, sorted(iban, tone)},
		{[]string{"--metadata", "project=apollo", "--created-before", start}, nil},
	} {
		if got := ids(mustRun(t, alice, runRecall, append([]string{"--json"}, c.args...)...)); !slices.Equal(got, c.want) {
			t.Errorf("recall %v: %v; want %v", c.args, got, c.want)
		}
		if got := ids(mustRun(t, alice, runSearch, append(append([]string{"--json"}, c.args...), "ledger")...)); !slices.Equal(got, c.want) {
			t.Errorf("search %v: %v; want %v", c.args, got, c.want)
		}
	}
	if out := mustRun(t, alice, runRecall, iban); !strings.Contains(out, "lang=en, project=apollo") {
		t.Errorf("recall ID does not print the metadata:\n%s", out)
	}
	if _, _, err := run(t, alice, runRemember, "--namespace", "n", "--class", "fact", "--metadata", "novalue", "x"); err == nil || !strings.Contains(err.Error(), "KEY=VALUE") {
		t.Errorf("remember --metadata novalue: %v; want a usage error", err)
	}
	if _, _, err := run(t, alice, runRecall, "--created-after", "yesterday"); err == nil || !strings.Contains(err.Error(), "created_after") {
		t.Errorf("recall --created-after yesterday: %v; want the server's refusal naming created_after", err)
	}
}
