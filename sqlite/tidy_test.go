package sqlite_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	custody "github.com/custody-mem/custody"
)

// Tidying merges index segments; searches and the gate's value lookups
// find exactly what they found before, and writes go on after it.
func TestTidyKeepsResults(t *testing.T) {
	ctx := t.Context()
	st, _, svc, alice := serviceAt(t, t.TempDir())
	words := []string{"invoice", "garden", "payroll", "travel", "dentist"}
	write := func(i int) {
		body := fmt.Sprintf("%s note %d for ACCT-%04d", words[i%len(words)], i, i%37)
		if _, err := svc.Remember(ctx, alice, custody.Candidate{Namespace: "n", Class: custody.ClassEpisode, Body: body, Channel: "user"}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 300 { // one commit each: many small segments
		write(i)
	}
	snapshot := func() (out []string) {
		for _, w := range words {
			hits, err := svc.Search(ctx, alice, custody.SearchInput{Query: w, Limit: custody.MaxSearchLimit})
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range hits {
				out = append(out, w+" "+h.ID)
			}
		}
		err := st.View(ctx, func(tx custody.Tx) error {
			for _, v := range []string{"acct0007", "acct0036", "note12"} {
				recs, err := tx.Mentioning(ctx, custody.Scope{Tenant: "acme", Subject: "alice"}, custody.MentionQuery{Text: v})
				if err != nil {
					return err
				}
				for _, r := range recs {
					out = append(out, v+" "+r.ID)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(out)
		return out
	}
	before := snapshot()
	if len(before) < 300 {
		t.Fatalf("only %d hits before tidying; the workload should find every record", len(before))
	}
	if err := st.Tidy(ctx); err != nil {
		t.Fatal(err)
	}
	if after := snapshot(); !slices.Equal(before, after) {
		t.Fatalf("results changed by tidying: %d hits before, %d after", len(before), len(after))
	}
	write(300)
	hits, err := svc.Search(ctx, alice, custody.SearchInput{Query: "300"})
	if err != nil || len(hits) != 1 || !strings.Contains(hits[0].Body, "note 300 ") {
		t.Fatalf("search for a write after tidying = %+v, %v; want that write", hits, err)
	}
	if _, err := svc.Verify(ctx, custody.VerifyOptions{}); err != nil {
		t.Fatal(err)
	}
}
