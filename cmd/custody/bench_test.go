package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"strings"
	"testing"
)

func benchRun(args ...string) (stdout, stderr string, err error) {
	var out, errb bytes.Buffer
	err = runBench(context.Background(), args, &out, &errb)
	return out.String(), errb.String(), err
}

func TestBenchPoisonMarkdown(t *testing.T) {
	out, _, err := benchRun("poison", "--families", "explicit-remember,launder-tool-echo", "--cells", "none,full", "--delay", "0", "--no-timing")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| family | none | full |",
		"| explicit-remember | 100% | 0% |",
		"| launder-tool-echo | 100% | 0% |",
		"2 families × 2 cells × 1 delays = 4 trials",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "µs/op") {
		t.Errorf("--no-timing output has a timing column:\n%s", out)
	}
}

func TestBenchPoisonJSON(t *testing.T) {
	out, _, err := benchRun("poison", "--families", "money-key-overwrite", "--cells", "channel+quarantine", "--delay", "0,1", "--json", "--seed", "3")
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Seed int64 `json:"seed"`
		Rows []struct {
			AttackSuccess float64 `json:"attack_success_rate"`
			Utility       float64 `json:"benign_utility"`
			MicrosPerOp   float64 `json:"us_per_op"`
		} `json:"rows"`
		Trials []json.RawMessage `json:"trials"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if rep.Seed != 3 || len(rep.Rows) != 1 || len(rep.Trials) != 2 {
		t.Fatalf("seed %d, %d rows, %d trials; want 3, 1, 2", rep.Seed, len(rep.Rows), len(rep.Trials))
	}
	if r := rep.Rows[0]; r.AttackSuccess != 0 || r.Utility != 1 || r.MicrosPerOp <= 0 {
		t.Errorf("row = %+v; want no attack success, full utility and a cost", r)
	}
}

func TestBenchList(t *testing.T) {
	out, _, err := benchRun("poison", "--list")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"explicit-remember", "cross-user-shared", "restore-fresh-store", "channel+quarantine"} {
		if !strings.Contains(out, want) {
			t.Errorf("--list lacks %q:\n%s", want, out)
		}
	}
}

func TestBenchUsage(t *testing.T) {
	var ue usageError
	for _, args := range [][]string{
		{},
		{"latency"},
		{"poison", "stray"},
		{"poison", "--delay", "0,x"},
		{"poison", "--delay", "-1"},
		{"poison", "--delay", ""},
		{"poison", "--families", "no-such-family"},
		{"poison", "--cells", "no-such-cell"},
		{"poison", "--model-url", "http://localhost:1/v1"},
		{"poison", "--model", "m"},
	} {
		if _, _, err := benchRun(args...); !errors.As(err, &ue) {
			t.Errorf("%q: err = %v, want a usage error", args, err)
		}
	}
	for _, args := range [][]string{{"-h"}, {"poison", "-h"}} {
		_, stderr, err := benchRun(args...)
		if !errors.Is(err, flag.ErrHelp) || !strings.Contains(stderr, "Usage: custody bench") {
			t.Errorf("%q: err = %v, stderr %q; want help", args, err, stderr)
		}
	}
}
