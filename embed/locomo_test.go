package embed_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/embed"
	"github.com/custody-mem/custody/sqlite"
	"github.com/custody-mem/custody/tlog"
)

// TestLoCoMo is the LoCoMo retrieval measure (docs/benchmarks.md): every
// dialog turn of each conversation in $CUSTODY_LOCOMO is stored as one
// episode of the conversation's user through the Service on SQLite (key
// = dia_id), each question of categories 1-4 is sent as plain text, and a
// question counts as recalled at k when one of its evidence turns is in
// the top k. It prints recall@1/5/10 per category and overall for each
// mode. Run:
//
//	CUSTODY_LOCOMO=/path/to/locomo-dev go test ./embed -run LoCoMo -v
func TestLoCoMo(t *testing.T) {
	dir := os.Getenv("CUSTODY_LOCOMO")
	if dir == "" {
		t.Skip("set CUSTODY_LOCOMO to a directory of LoCoMo conversations (*.json)")
	}
	convs, err := embed.LoadLoCoMo(dir)
	if err != nil {
		t.Fatal(err)
	}
	emb, err := embed.NewBuiltin(0)
	if err != nil {
		t.Fatal(err)
	}
	modes := []custody.SearchMode{custody.ModeLexical, custody.ModeSemantic, custody.ModeHybrid}
	ks := []int{1, 5, 10}
	// hits[mode][category][k index]; category 0 is overall.
	hits := map[custody.SearchMode]*[5][3]int{}
	for _, m := range modes {
		hits[m] = &[5][3]int{}
	}
	var asked [5]int
	for _, c := range convs {
		svc, alice := locomoService(t, emb)
		ctx := context.Background()
		batch := make([]custody.Candidate, 0, 64)
		flush := func() {
			if _, err := svc.RememberBatch(ctx, alice, batch); err != nil {
				t.Fatal(err)
			}
			batch = batch[:0]
		}
		for i, key := range c.Keys {
			batch = append(batch, custody.Candidate{Namespace: "locomo", Key: key, Class: custody.ClassEpisode, Body: c.Bodies[i], Channel: custody.ChannelUser})
			if len(batch) == cap(batch) {
				flush()
			}
		}
		flush()
		if _, err := svc.EmbedPending(ctx); err != nil {
			t.Fatal(err)
		}
		for _, q := range c.Questions {
			asked[0]++
			asked[q.Category]++
			for _, m := range modes {
				res, err := svc.SearchRanked(ctx, alice, custody.SearchInput{Query: q.Text, Mode: m, Limit: 10})
				if err != nil {
					t.Fatalf("%s %q: %v", m, q.Text, err)
				}
				if res.Mode != m {
					t.Fatalf("%s %q answered as %s: %s", m, q.Text, res.Mode, res.Fallback)
				}
				for j, k := range ks {
					for _, h := range res.Items[:min(k, len(res.Items))] {
						if slices.Contains(q.Evidence, h.Key) {
							hits[m][0][j]++
							hits[m][q.Category][j]++
							break
						}
					}
				}
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "LoCoMo %s: %d conversations, %d questions (model %s)\n", dir, len(convs), asked[0], emb.Model())
	fmt.Fprintf(&b, "%-9s %-12s %5s %6s %6s %6s\n", "mode", "category", "n", "R@1", "R@5", "R@10")
	names := []string{"overall", "multi-hop", "temporal", "open-domain", "single-hop"}
	for _, m := range modes {
		for cat := 1; cat <= 4; cat++ {
			writeRecall(&b, m, names[cat], asked[cat], hits[m][cat])
		}
		writeRecall(&b, m, names[0], asked[0], hits[m][0])
	}
	t.Log("\n" + b.String())
}

func writeRecall(b *strings.Builder, m custody.SearchMode, name string, n int, h [3]int) {
	r := func(i int) float64 {
		if n == 0 {
			return 0
		}
		return float64(h[i]) / float64(n)
	}
	fmt.Fprintf(b, "%-9s %-12s %5d %6.3f %6.3f %6.3f\n", m, name, n, r(0), r(1), r(2))
}

func locomoService(t *testing.T, emb embed.Embedder) (*custody.Service, *custody.Caller) {
	t.Helper()
	dir := t.TempDir()
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	key, _, err := tlog.LoadOrCreateServerKey(filepath.Join(dir, "server.key"))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := custody.New(st, key, custody.Options{Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	p, _, err := svc.AddPrincipal(context.Background(), custody.PrincipalInput{Tenant: "locomo", Name: "user", Roles: []string{"user"}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := svc.Act(context.Background(), p, "")
	if err != nil {
		t.Fatal(err)
	}
	return svc, c
}
