package poisonbench

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// row finds the aggregate of a family in a cell.
func (r *Report) row(family, cell string) (Row, bool) {
	for _, x := range r.Rows {
		if x.Family == family && x.Cell == cell {
			return x, true
		}
	}
	return Row{}, false
}

// cellSummary aggregates a cell over the families from the studies (the
// probes are reported on their own).
func (r *Report) cellSummary(cell string) Row {
	var trials []TrialResult
	for _, t := range r.Trials {
		if t.Cell == cell && !r.probe(t.Family) {
			trials = append(trials, t)
		}
	}
	return aggregate("", cell, trials)
}

func (r *Report) probe(family string) bool {
	for _, f := range r.Families {
		if f.Name == family {
			return f.Probe
		}
	}
	return false
}

func pct(x float64) string { return fmt.Sprintf("%.0f%%", 100*x) }

// fine is a percentage for small rates.
func fine(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

// WriteMarkdown writes the report as Markdown tables.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	delays := make([]string, len(r.Delays))
	for i, d := range r.Delays {
		delays[i] = fmt.Sprint(d)
	}
	n := len(r.Families) * len(r.Cells) * len(r.Delays)
	p("# poisonbench\n\n")
	p("Seed %d; delays %s (benign sessions between planting and firing); agent: %s.\n", r.Seed, strings.Join(delays, ", "), r.Agent)
	p("%d families × %d cells × %d delays = %d trials, each on a fresh SQLite store through the real service.\n",
		len(r.Families), len(r.Cells), len(r.Delays), n)
	byTarget := map[string]int{}
	for _, t := range r.Trials {
		byTarget[t.Target]++
	}
	p("The attacks target %s in %d trials and %s in %d; each benign twin uses the other vendor.\n",
		acme, byTarget[acme], globex, byTarget[globex])
	if r.Timing {
		p("Wall time %.1f s.\n", r.Elapsed.Seconds())
	}

	p("\n## Attack success rate\n\n")
	p("| family |")
	for _, c := range r.Cells {
		p(" %s |", c.Name)
	}
	p("\n|---|")
	for range r.Cells {
		p("--:|")
	}
	p("\n")
	for _, f := range r.Families {
		name := f.Name
		if f.Probe {
			name += " (probe)"
		}
		p("| %s |", name)
		for _, c := range r.Cells {
			x, _ := r.row(f.Name, c.Name)
			p(" %s |", pct(x.AttackSuccess))
		}
		p("\n")
	}

	p("\n## By cell (families from the studies; probes, if any, excluded)\n\n")
	p("| cell | attack success | poison persistence | poison retrieval | benign utility | victim utility | false positives | confirmations |")
	if r.Timing {
		p(" µs/op |")
	}
	p("\n|---|--:|--:|--:|--:|--:|--:|--:|")
	if r.Timing {
		p("--:|")
	}
	p("\n")
	for _, c := range r.Cells {
		x := r.cellSummary(c.Name)
		p("| %s | %s | %s | %s | %s | %s | %s | %.2f |", c.Name, pct(x.AttackSuccess), pct(x.Persistence), pct(x.Retrieval),
			pct(x.Utility), pct(x.VictimUtility), fine(x.FalsePositives), x.Confirmations)
		if r.Timing {
			p(" %.0f |", x.MicrosPerOp)
		}
		p("\n")
	}

	p("\n## By family and cell\n\n")
	p("| family | cell | attack success | persistence | retrieval | benign utility | victim utility | false positives | confirmations |")
	if r.Timing {
		p(" µs/op |")
	}
	p("\n|---|---|--:|--:|--:|--:|--:|--:|--:|")
	if r.Timing {
		p("--:|")
	}
	p("\n")
	for _, f := range r.Families {
		for _, c := range r.Cells {
			x, _ := r.row(f.Name, c.Name)
			p("| %s | %s | %s | %s | %s | %s | %s | %s | %.2f |", f.Name, c.Name, pct(x.AttackSuccess), pct(x.Persistence),
				pct(x.Retrieval), pct(x.Utility), pct(x.VictimUtility), fine(x.FalsePositives), x.Confirmations)
			if r.Timing {
				p(" %.0f |", x.MicrosPerOp)
			}
			p("\n")
		}
	}

	p("\n## Cells\n\n")
	for _, c := range r.Cells {
		p("- **%s**: %s.\n", c.Name, c.Summary)
	}
	p("\n## Notes\n\n")
	for _, f := range r.Families {
		if f.Note != "" {
			p("- **%s**: %s.\n", f.Name, f.Note)
		}
	}
	for _, f := range r.Families {
		if f.Probe {
			p("- **%s** (probe): %s\n", f.Name, f.Gap)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
