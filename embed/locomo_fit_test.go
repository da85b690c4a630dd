package embed_test

import (
	"fmt"
	"strings"
	"testing"

	custody "github.com/custody-mem/custody"
)

// TestLoCoMoFit fits the weights of hybrid search's calibrated fusion
// (custody.Fusion, fusion.go) by coordinate ascent: starting from the
// weights of reciprocal rank fusion, each weight in turn takes the value
// of its grid that most raises R@1 + R@5 + R@10 + all@10 on the fold
// fitted on, the others held, until a pass changes none (at most
// fitPasses). It fits on each development conversation and measures on
// the other, then fits on both for the constants shipped
// (defaultFusion). Run:
//
//	CUSTODY_LOCOMO=/path/to/locomo-dev go test ./embed -run LoCoMoFit -v -timeout 0
func TestLoCoMoFit(t *testing.T) {
	dir, convs, emb := loadLoCoMo(t)
	folds := storeLoCoMo(t, convs, emb)
	var b strings.Builder
	fmt.Fprintf(&b, "LoCoMo %s: fusion fitted by coordinate ascent (model %s)\n", dir, emb.Model())
	fitted := make([]custody.Fusion, len(folds))
	for f := range folds {
		fitted[f] = fitFusion(t, &b, convs[f].Name, folds[f:f+1])
	}
	names := []string{"overall", "multi-hop", "temporal", "open-domain", "single-hop"}
	if len(folds) == 2 {
		fmt.Fprintf(&b, "\ncross-fold: fitted on one fold, measured on the other (against reciprocal rank fusion)\n")
		fmt.Fprintf(&b, "%-26s %-12s %5s %6s %6s %6s %6s\n", "fitted on → measured on", "category", "n", "R@1", "R@5", "R@10", "all@10")
		var all, rrf tally
		var n tally1
		for f := range folds {
			other := folds[1-f]
			h := other.run(t, variant{"fit", custody.ModeHybrid, custody.RankingSteps{Fusion: &fitted[f]}})
			r := other.run(t, variant{"rrf", custody.ModeHybrid, custody.RankingSteps{Fusion: &rrfFusion}})
			asked := other.asked()
			all.add(h)
			rrf.add(r)
			n.add(asked)
			for cat := range 5 {
				writeRecall(&b, convs[f].Name+" → "+convs[1-f].Name, names[cat], asked[cat], h[cat])
			}
			writeRecall(&b, "rrf on "+convs[1-f].Name, names[0], asked[0], r[0])
		}
		writeRecall(&b, "both, cross-fold", names[0], n[0], all[0])
		writeRecall(&b, "both, rrf", names[0], n[0], rrf[0])
	}
	fitFusion(t, &b, "both", folds)
	t.Log("\n" + b.String())
}

// rrfFusion is reciprocal rank fusion as hybrid search weighed it before
// the calibrated model: the start of every fit.
var rrfFusion = custody.Fusion{SemanticRank: 0.5, FeedbackRank: 1}

// fitPasses bounds the passes of coordinate ascent.
const fitPasses = 4

// fusionWeights are the fitted weights, with the grid each is tried on.
var fusionWeights = []struct {
	name string
	grid []float64
	at   func(*custody.Fusion) *float64
}{
	{"SemanticRank", []float64{0, 0.25, 0.5, 1, 2}, func(f *custody.Fusion) *float64 { return &f.SemanticRank }},
	{"FeedbackRank", []float64{0, 0.25, 0.5, 1, 2}, func(f *custody.Fusion) *float64 { return &f.FeedbackRank }},
	{"LexicalScore", []float64{0, 0.01, 0.02, 0.04, 0.08, 0.16, 0.32}, func(f *custody.Fusion) *float64 { return &f.LexicalScore }},
	{"SemanticScore", []float64{0, 0.01, 0.02, 0.04, 0.08, 0.16, 0.32}, func(f *custody.Fusion) *float64 { return &f.SemanticScore }},
	{"FeedbackScore", []float64{0, 0.01, 0.02, 0.04, 0.08, 0.16, 0.32}, func(f *custody.Fusion) *float64 { return &f.FeedbackScore }},
}

// fitFusion fits the fusion weights on folds together and writes each
// step to b.
func fitFusion(t *testing.T, b *strings.Builder, name string, folds []*locomoFold) custody.Fusion {
	objective := func(m custody.Fusion) (int, tally) {
		var h tally
		for _, f := range folds {
			h.add(f.run(t, variant{"fit", custody.ModeHybrid, custody.RankingSteps{Fusion: &m}}))
		}
		return h[0][0] + h[0][1] + h[0][2] + h[0][3], h
	}
	var n tally1
	for _, f := range folds {
		n.add(f.asked())
	}
	m := rrfFusion
	best, h := objective(m)
	fmt.Fprintf(b, "\nfit on %s (%d questions): start %+v\n", name, n[0], m)
	writeRecall(b, "rrf", "overall", n[0], h[0])
	for pass := range fitPasses {
		changed := false
		for _, w := range fusionWeights {
			for _, v := range w.grid {
				try := m
				if *w.at(&try) == v {
					continue
				}
				*w.at(&try) = v
				if got, _ := objective(try); got > best {
					m, best, changed = try, got, true
				}
			}
		}
		_, h = objective(m)
		fmt.Fprintf(b, "pass %d: %+v\n", pass+1, m)
		writeRecall(b, "fitted", "overall", n[0], h[0])
		if !changed {
			break
		}
	}
	return m
}
