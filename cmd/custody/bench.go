package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/custody-mem/custody/poisonbench"
)

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	usage := func() {
		fmt.Fprintf(stderr, "Usage: custody bench <benchmark> [flags]\n\nBenchmarks:\n"+
			"  poison   the memory-poisoning benchmark: attack families against defence cells\n\n"+
			"Run 'custody bench poison -h' for its flags.\n")
	}
	if len(args) == 0 {
		usage()
		return usageError{"name a benchmark: custody bench poison"}
	}
	switch args[0] {
	case "poison":
		return runBenchPoison(ctx, args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		usage()
		return flag.ErrHelp
	}
	return usageError{fmt.Sprintf("unknown benchmark %q; the benchmarks are: poison", args[0])}
}

func runBenchPoison(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench poison", flag.ContinueOnError)
	fs.SetOutput(stderr)
	seed := fs.Int64("seed", 1, "`seed` of the accounts and the benign sessions; a seed always gives the same report")
	delays := fs.String("delay", benchJoin(poisonbench.DefaultDelays), "comma-separated `counts` of benign sessions between planting and firing (the full run is 0,1,10,100)")
	asJSON := fs.Bool("json", false, "print the report as JSON, with every trial")
	families := fs.String("families", "", "comma-separated `names` of the families to run (default: all; see --list)")
	cells := fs.String("cells", "", "comma-separated `names` of the defence cells to run (default: all; see --list)")
	noTiming := fs.Bool("no-timing", false, "leave out the cost per operation, the one result that varies between runs")
	parallel := fs.Int("parallel", 0, "trials run at once (default: the number of CPUs)")
	list := fs.Bool("list", false, "list the families and cells and exit")
	modelURL := fs.String("model-url", "", "drive the agent with an LLM behind this OpenAI-compatible API `base` URL (e.g. http://localhost:11434/v1) instead of the scripted agent")
	model := fs.String("model", "", "model `name` for --model-url")
	keyEnv := fs.String("model-key-env", "OPENAI_API_KEY", "environment `variable` holding the API key for --model-url, if any")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: custody bench poison [--seed N] [--delay 0,1,10] [--json] [--families a,b] [--cells x,y] [--no-timing]\n\n"+
			"Plays memory-poisoning attack families against defence cells of the real service, each trial on a\n"+
			"fresh SQLite store in a temporary directory, and prints attack success, poison persistence and\n"+
			"retrieval, benign utility, false positives and cost per operation per family and cell.\n"+
			"The agent is scripted and always complies; for the full run use --delay 0,1,10,100.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	if *list {
		return listPoison(stdout)
	}
	cfg := poisonbench.Config{Seed: *seed, Parallel: *parallel, Timing: !*noTiming}
	var err error
	if cfg.Delays, err = benchInts(*delays); err != nil {
		return usageError{fmt.Sprintf("--delay: %v", err)}
	}
	for _, d := range cfg.Delays {
		if d < 0 || d > poisonbench.MaxDelay {
			return usageError{fmt.Sprintf("--delay: %d is not between 0 and %d", d, poisonbench.MaxDelay)}
		}
	}
	for _, n := range benchSplit(*families) {
		if _, err := poisonbench.FamilyNamed(n); err != nil {
			return usageError{strings.TrimPrefix(err.Error(), "poisonbench: ")}
		}
		cfg.Families = append(cfg.Families, n)
	}
	for _, n := range benchSplit(*cells) {
		if _, err := poisonbench.CellNamed(n); err != nil {
			return usageError{strings.TrimPrefix(err.Error(), "poisonbench: ")}
		}
		cfg.Cells = append(cfg.Cells, n)
	}
	switch {
	case *modelURL != "" && *model == "":
		return usageError{"--model-url needs --model NAME"}
	case *modelURL == "" && *model != "":
		return usageError{"--model needs --model-url URL"}
	case *modelURL != "":
		cfg.Brain = &poisonbench.Model{URL: *modelURL, Name: *model, Key: os.Getenv(*keyEnv)}
		cfg.AgentName = fmt.Sprintf("model %s at %s", *model, *modelURL)
	}
	start := time.Now()
	fmt.Fprintf(stderr, "custody bench poison: seed %d, delays %s...\n", cfg.Seed, benchJoin(cfg.Delays))
	rep, err := poisonbench.Run(ctx, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "custody bench poison: %d trials in %.1f s\n", len(rep.Trials), time.Since(start).Seconds())
	if *asJSON {
		return rep.WriteJSON(stdout)
	}
	return rep.WriteMarkdown(stdout)
}

func listPoison(w io.Writer) error {
	fmt.Fprintln(w, "Families:")
	for _, f := range poisonbench.Families {
		probe := ""
		if f.Probe {
			probe = " (probe)"
		}
		fmt.Fprintf(w, "  %-22s %s%s\n", f.Name, f.Study, probe)
	}
	fmt.Fprintln(w, "\nCells:")
	for _, c := range poisonbench.Cells {
		fmt.Fprintf(w, "  %-22s %s\n", c.Name, c.Summary)
	}
	return nil
}

func benchSplit(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func benchInts(s string) ([]int, error) {
	parts := benchSplit(s)
	if len(parts) == 0 {
		return nil, errors.New("give at least one number, e.g. 0,1,10")
	}
	out := make([]int, len(parts))
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			return nil, fmt.Errorf("%q is not a whole number", p)
		}
		out[i] = n
	}
	return out, nil
}

func benchJoin(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}
