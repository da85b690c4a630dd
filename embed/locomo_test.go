package embed_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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
// the top k. Each conversation is a fold, reported on its own (a setting
// tuned on the other fold is measured on this one), then both together:
// recall@1/5/10 per category and overall for each mode, and for hybrid
// search each step switched off in turn (the ablations). Run:
//
//	CUSTODY_LOCOMO=/path/to/locomo-dev go test ./embed -run LoCoMo -v
//
// with CUSTODY_LOCOMO_EMBEDDER=builtin (or another --embedder provider)
// for another embedder than the default one, glove.
func TestLoCoMo(t *testing.T) {
	dir, convs, emb := loadLoCoMo(t)
	variants := []variant{
		{"lexical", custody.ModeLexical, custody.RankingSteps{}},
		{"semantic", custody.ModeSemantic, custody.RankingSteps{}},
		{"hybrid", custody.ModeHybrid, custody.RankingSteps{}},
		{"-feedback", custody.ModeHybrid, custody.RankingSteps{NoFeedback: true}},
		{"-context", custody.ModeHybrid, custody.RankingSteps{NoContext: true}},
		{"-semantic", custody.ModeHybrid, custody.RankingSteps{NoSemantic: true}},
		{"-neighbours", custody.ModeHybrid, custody.RankingSteps{NoNeighbours: true}},
		{"-session", custody.ModeHybrid, custody.RankingSteps{NoSession: true}},
		{"-diversity", custody.ModeHybrid, custody.RankingSteps{NoDiversity: true}},
	}
	folds := storeLoCoMo(t, convs, emb)
	// tally[fold][variant]; fold len(convs) is both folds together.
	hits := make([][]tally, len(convs)+1)
	asked := make([]tally1, len(convs)+1)
	for f := range hits {
		hits[f] = make([]tally, len(variants))
	}
	for f, fold := range folds {
		asked[f] = fold.asked()
		asked[len(convs)].add(asked[f])
		for i, v := range variants {
			h := fold.run(t, v)
			hits[f][i] = h
			hits[len(convs)][i].add(h)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "LoCoMo %s: %d conversations (model %s)\n", dir, len(convs), emb.Model())
	names := []string{"overall", "multi-hop", "temporal", "open-domain", "single-hop"}
	for f := range hits {
		fold := "both folds"
		if f < len(convs) {
			fold = "fold " + convs[f].Name
		}
		fmt.Fprintf(&b, "\n%s: %d questions\n", fold, asked[f][0])
		fmt.Fprintf(&b, "%-11s %-12s %5s %6s %6s %6s %6s\n", "mode", "category", "n", "R@1", "R@5", "R@10", "all@10")
		for i, v := range variants {
			if i < 3 {
				for cat := 1; cat <= 4; cat++ {
					writeRecall(&b, v.name, names[cat], asked[f][cat], hits[f][i][cat])
				}
			}
			writeRecall(&b, v.name, names[0], asked[f][0], hits[f][i][0])
		}
	}
	if len(folds) == 2 {
		crossFolds(t, &b, folds, convs)
	}
	t.Log("\n" + b.String())
}

// loadLoCoMo reads the conversations of $CUSTODY_LOCOMO (the test is
// skipped when it is unset) and makes the embedder measured:
// $CUSTODY_LOCOMO_EMBEDDER, the default (glove) unless set.
func loadLoCoMo(t *testing.T) (string, []embed.LoCoMoConv, embed.Embedder) {
	t.Helper()
	dir := os.Getenv("CUSTODY_LOCOMO")
	if dir == "" {
		t.Skip("set CUSTODY_LOCOMO to a directory of LoCoMo conversations (*.json)")
	}
	convs, err := embed.LoadLoCoMo(dir)
	if err != nil {
		t.Fatal(err)
	}
	emb, err := embed.New(embed.Config{Provider: os.Getenv("CUSTODY_LOCOMO_EMBEDDER")})
	if err != nil {
		t.Fatal(err)
	}
	return dir, convs, emb
}

// storeLoCoMo stores each conversation as a fold of its own.
func storeLoCoMo(t *testing.T, convs []embed.LoCoMoConv, emb embed.Embedder) []*locomoFold {
	folds := make([]*locomoFold, len(convs))
	for f, c := range convs {
		folds[f] = newLoCoMoFold(t, c, emb)
	}
	return folds
}

func writeRecall(b *strings.Builder, m, name string, n int, h [4]int) {
	r := func(i int) float64 {
		if n == 0 {
			return 0
		}
		return float64(h[i]) / float64(n)
	}
	fmt.Fprintf(b, "%-11s %-12s %5d %6.3f %6.3f %6.3f %6.3f\n", m, name, n, r(0), r(1), r(2), r(3))
}

// locomoStore opens a fresh store, its server key and a user to act as.
func locomoStore(t *testing.T) (custody.Store, *tlog.ServerKey, *custody.Caller) {
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
	svc, err := custody.New(st, key, custody.Options{})
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
	return st, key, c
}
