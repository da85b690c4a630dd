package embed_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/embed"
	"github.com/custody-mem/custody/tlog"
)

// variant is one way of ranking measured on LoCoMo.
type variant struct {
	name  string
	mode  custody.SearchMode
	steps custody.RankingSteps
}

// tally1 counts per category (0 overall, 1-4 LoCoMo's); tally counts
// hits per category at each of locomoKs, then the questions with all
// their evidence turns in the first 10 (what a multi-hop answer needs).
type (
	tally1 [5]int
	tally  [5][4]int
)

var locomoKs = []int{1, 5, 10}

func (t *tally1) add(o tally1) {
	for i := range t {
		t[i] += o[i]
	}
}

func (t *tally) add(o tally) {
	for i := range t {
		for j := range t[i] {
			t[i][j] += o[i][j]
		}
	}
}

// locomoFold is one conversation stored for measuring: each turn an
// episode of the user, written in the session of its LoCoMo session
// (dia_id D3:5 is turn 5 of session D3), as an agent run writes a
// conversation.
type locomoFold struct {
	conv  embed.LoCoMoConv
	st    custody.Store
	key   *tlog.ServerKey
	alice *custody.Caller
	emb   embed.Embedder
}

func newLoCoMoFold(t *testing.T, c embed.LoCoMoConv, emb embed.Embedder) *locomoFold {
	st, key, alice := locomoStore(t)
	ctx := context.Background()
	svc, err := custody.New(st, key, custody.Options{Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	sessions := map[string]string{}
	batch := make([]custody.Candidate, 0, 64)
	flush := func() {
		if _, err := svc.RememberBatch(ctx, alice, batch); err != nil {
			t.Fatal(err)
		}
		batch = batch[:0]
	}
	for i, key := range c.Keys {
		name, _, _ := strings.Cut(key, ":")
		if _, ok := sessions[name]; !ok {
			sess, err := svc.OpenSession(ctx, alice)
			if err != nil {
				t.Fatal(err)
			}
			sessions[name] = sess.ID
		}
		batch = append(batch, custody.Candidate{Namespace: "locomo", Key: key, Class: custody.ClassEpisode, Body: c.Bodies[i], Channel: custody.ChannelUser, Session: sessions[name]})
		if len(batch) == cap(batch) {
			flush()
		}
	}
	flush()
	if _, err := svc.EmbedPending(ctx); err != nil {
		t.Fatal(err)
	}
	return &locomoFold{conv: c, st: st, key: key, alice: alice, emb: emb}
}

func (f *locomoFold) asked() tally1 {
	var n tally1
	for _, q := range f.conv.Questions {
		n[0]++
		n[q.Category]++
	}
	return n
}

// run asks every question of the fold ranked by v.
func (f *locomoFold) run(t *testing.T, v variant) tally {
	svc, err := custody.New(f.st, f.key, custody.Options{Embedder: f.emb, Ranking: v.steps})
	if err != nil {
		t.Fatal(err)
	}
	var hits tally
	for _, q := range f.conv.Questions {
		res, err := svc.SearchRanked(context.Background(), f.alice, custody.SearchInput{Query: q.Text, Mode: v.mode, Limit: 10})
		if err != nil {
			t.Fatalf("%s %q: %v", v.name, q.Text, err)
		}
		if res.Mode != v.mode {
			t.Fatalf("%s %q answered as %s: %s", v.name, q.Text, res.Mode, res.Fallback)
		}
		all := true
		for _, e := range q.Evidence {
			all = all && slices.ContainsFunc(res.Items, func(s custody.Scored) bool { return s.Key == e })
		}
		if all {
			hits[0][3]++
			hits[q.Category][3]++
		}
		for j, k := range locomoKs {
			for _, h := range res.Items[:min(k, len(res.Items))] {
				if slices.Contains(q.Evidence, h.Key) {
					hits[0][j]++
					hits[q.Category][j]++
					break
				}
			}
		}
	}
	return hits
}

// setting is one tuned setting of hybrid ranking: the values tried, each
// applied to the steps in use.
type setting struct {
	name   string
	values []string
	set    func(s *custody.RankingSteps, i int)
}

var locomoSettings = []setting{
	{"semanticWeight", []string{"0.5", "0.25", "1"}, func(s *custody.RankingSteps, i int) {
		s.Fusion = &custody.Fusion{SemanticRank: []float64{0.5, 0.25, 1}[i], FeedbackRank: 1}
	}},
	{"staticCandidates", []string{"400", "300", "200"}, func(s *custody.RankingSteps, i int) {
		s.StaticCandidates = []int{400, 300, 200}[i]
	}},
	{"feedback", []string{"on", "off"}, func(s *custody.RankingSteps, i int) {
		s.NoFeedback = i == 1
	}},
	{"contextShare", []string{"0.5", "0.25", "1"}, func(s *custody.RankingSteps, i int) {
		s.ContextShare = []float64{0.5, 0.25, 1}[i]
	}},
	{"neighbourShare", []string{"off", "0.1", "0.2", "0.3", "0.5"}, func(s *custody.RankingSteps, i int) {
		s.NoNeighbours, s.NeighbourShare = i == 0, []float64{0, 0.1, 0.2, 0.3, 0.5}[i]
	}},
	{"sessionShare", []string{"off", "0.1", "0.3", "0.5", "1"}, func(s *custody.RankingSteps, i int) {
		s.NoSession, s.SessionShare = i == 0, []float64{0, 0.1, 0.3, 0.5, 1}[i]
	}},
	{"sessionDecay", []string{"off", "0.95", "0.9", "0.8", "0.6"}, func(s *custody.RankingSteps, i int) {
		s.NoDiversity, s.SessionDecay = i == 0, []float64{1, 0.95, 0.9, 0.8, 0.6}[i]
	}},
}

// crossFolds tunes each setting on one fold (the value of the best
// R@1 + R@5 + R@10 + all@10 there, every other setting at its constant) and
// measures hybrid ranking with all the values so chosen on the other
// fold, then the same the other way round: the figures of a setting
// never measured on the data it was chosen on.
func crossFolds(t *testing.T, b *strings.Builder, folds []*locomoFold, convs []embed.LoCoMoConv) {
	fmt.Fprintf(b, "\nsettings: R@1/R@5/R@10 of hybrid ranking on each fold, each setting varied alone\n")
	chosen := make([]custody.RankingSteps, len(folds))
	for _, st := range locomoSettings {
		best := make([]int, len(folds))
		bestSum := make([]int, len(folds))
		for i, val := range st.values {
			var steps custody.RankingSteps
			st.set(&steps, i)
			fmt.Fprintf(b, "%-15s %-5s", st.name, val)
			for f, fold := range folds {
				h := fold.run(t, variant{st.name, custody.ModeHybrid, steps})
				n := fold.asked()[0]
				fmt.Fprintf(b, "   fold %s %.3f/%.3f/%.3f", convs[f].Name, recall(h[0][0], n), recall(h[0][1], n), recall(h[0][2], n))
				if sum := h[0][0] + h[0][1] + h[0][2] + h[0][3]; i == 0 || sum > bestSum[f] {
					best[f], bestSum[f] = i, sum
				}
			}
			fmt.Fprintln(b)
		}
		for f := range folds {
			st.set(&chosen[f], best[f])
		}
		fmt.Fprintf(b, "%-15s chosen: %s on fold %s, %s on fold %s\n", st.name, st.values[best[0]], convs[0].Name, st.values[best[1]], convs[1].Name)
	}
	fmt.Fprintf(b, "\ncross-fold: hybrid ranking with the settings chosen on one fold, measured on the other\n")
	fmt.Fprintf(b, "%-22s %-12s %5s %6s %6s %6s %6s\n", "tuned on → measured on", "category", "n", "R@1", "R@5", "R@10", "all@10")
	names := []string{"overall", "multi-hop", "temporal", "open-domain", "single-hop"}
	var all tally
	var allN tally1
	for f := range folds {
		other := folds[1-f]
		h := other.run(t, variant{"cross", custody.ModeHybrid, chosen[f]})
		n := other.asked()
		all.add(h)
		allN.add(n)
		for cat := range 5 {
			writeRecall(b, convs[f].Name+" → "+convs[1-f].Name, names[cat], n[cat], h[cat])
		}
	}
	writeRecall(b, "both", names[0], allN[0], all[0])
}

func recall(hits, n int) float64 {
	if n == 0 {
		return 0
	}
	return float64(hits) / float64(n)
}
