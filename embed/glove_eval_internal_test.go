package embed

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
)

// TestGloveWordScorerLoCoMo ranks every turn of each LoCoMo conversation
// against each question by the glove word scorer alone (no store, no
// candidate bound, no fusion), beside the built-in embedder's term
// scoring: the quick measure the word scorer's settings were chosen by,
// each fold's best reported beside its figure on the other fold.
// GLOVE_GRID=1 tries a grid of settings; GLOVE_TABLE=file reads another
// table (internal/glovegen's output) than the embedded one. Run:
//
//	CUSTODY_LOCOMO=/path/to/locomo-dev go test ./embed -run GloveWordScorerLoCoMo -v
func TestGloveWordScorerLoCoMo(t *testing.T) {
	dir := os.Getenv("CUSTODY_LOCOMO")
	if dir == "" {
		t.Skip("set CUSTODY_LOCOMO to a directory of LoCoMo conversations (*.json)")
	}
	convs, err := LoadLoCoMo(dir)
	if err != nil {
		t.Fatal(err)
	}
	g, err := loadWordVectors()
	if f := os.Getenv("GLOVE_TABLE"); f != "" {
		raw, rerr := os.ReadFile(f)
		if rerr != nil {
			t.Fatal(rerr)
		}
		g, err = readWordVectors(raw)
	}
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewBuiltin(0)
	if err != nil {
		t.Fatal(err)
	}
	grid := []wordParams{defaultWordParams}
	if os.Getenv("GLOVE_GRID") != "" {
		grid = nil
		for _, fl := range []float32{0.2, 0.3, 0.4, 0.5} {
			for _, syn := range []float32{0.5, 0.8} {
				for _, r0 := range []float64{1, 10} {
					grid = append(grid, wordParams{fl, syn, r0})
				}
			}
		}
	}
	var out strings.Builder
	fmt.Fprintf(&out, "%-8s %-24s %6s %6s %6s\n", "fold", "scorer", "R@1", "R@5", "R@10")
	results := make([][][3]float64, len(convs)) // fold, grid point
	for f, c := range convs {
		vs, err := b.Embed(context.Background(), c.Bodies)
		if err != nil {
			t.Fatal(err)
		}
		stored := make([][]byte, len(vs))
		for i, v := range vs {
			stored[i] = Quantize(v)
		}
		r := recallAt(c, func(q string) []float32 {
			terms, _ := b.Embed(context.Background(), b.Terms(q))
			ts := NewTermScorer[int](terms)
			for i, v := range stored {
				ts.Add(i, v)
			}
			ids, scores := ts.Top(len(stored))
			out := make([]float32, len(stored))
			for j, id := range ids {
				out[id] = scores[j]
			}
			return out
		})
		fmt.Fprintf(&out, "%-8s %-24s %6.3f %6.3f %6.3f\n", c.Name, "builtin terms", r[0], r[1], r[2])
		for _, p := range grid {
			r := recallAt(c, func(q string) []float32 {
				s := g.scorer(q, p)
				out := make([]float32, len(c.Bodies))
				for i, body := range c.Bodies {
					out[i] = s.score(body)
				}
				return out
			})
			results[f] = append(results[f], r)
			fmt.Fprintf(&out, "%-8s %-24s %6.3f %6.3f %6.3f\n", c.Name, fmt.Sprintf("glove %v", p), r[0], r[1], r[2])
		}
	}
	for f, c := range convs {
		best := 0
		for i, r := range results[f] {
			if r[0]+r[1]+r[2] > results[f][best][0]+results[f][best][1]+results[f][best][2] {
				best = i
			}
		}
		fmt.Fprintf(&out, "best on %s: %v", c.Name, grid[best])
		for o := range convs {
			if o != f {
				fmt.Fprintf(&out, "; on %s %.3f %.3f %.3f", convs[o].Name, results[o][best][0], results[o][best][1], results[o][best][2])
			}
		}
		out.WriteString("\n")
	}
	t.Log("\n" + out.String())
}

// recallAt is the share of c's questions with an evidence turn among the
// k best-scored turns (a positive score), for k = 1, 5, 10.
func recallAt(c LoCoMoConv, score func(q string) []float32) [3]float64 {
	var h [3]float64
	for _, q := range c.Questions {
		sc := score(q.Text)
		idx := make([]int, len(sc))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(i, j int) bool { return sc[idx[i]] > sc[idx[j]] })
		for j, k := range []int{1, 5, 10} {
			for _, i := range idx[:min(k, len(idx))] {
				if sc[i] > 0 && slices.Contains(q.Evidence, c.Keys[i]) {
					h[j]++
					break
				}
			}
		}
	}
	n := float64(len(c.Questions))
	return [3]float64{h[0] / n, h[1] / n, h[2] / n}
}
