// Command custody is the custody memory server and its tools: the server
// (serve, mcp), offline store tools (principal, verify, reindex, export,
// restore),
// clients of a running server (remember, recall, search, review, lineage,
// gate, log; import, which also writes into a store with --db), the
// payee-poisoning demo and the benchmarks.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"
)

// verb is one subcommand. run parses its own flags from args.
type verb struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

var verbs = map[string]verb{
	"serve":     {"run the server (HTTP API, MCP at /mcp; embedded SQLite by default)", runServe},
	"principal": {"manage principals: principal add|list|show|update|rotate|revoke", runPrincipal},
	"demo":      {"play the payee-poisoning story end to end on a throwaway store", runDemo},
	"verify":    {"check that the store and its signed log agree", runVerify},
	"reindex":   {"rebuild the indexes and lineage edges from the records, once they verify", runReindex},
	"remember":  {"submit a memory to a running server", runRemember},
	"recall":    {"get a memory by id, or list memories", runRecall},
	"search":    {"search memories", runSearch},
	"review":    {"list, approve or reject quarantined memories", runReview},
	"lineage":   {"show a memory's ancestors and descendants", runLineage},
	"impact":    {"show what a suspect memory reached: descendants, sessions that read it, gate decisions", runImpact},
	"gate":      {"ask the gate whether an action may run", runGate},
	"log":       {"the server's signed log: log checkpoint [--pin FILE] holds it to the last one seen", runLog},
	"export":    {"write a signed snapshot of a tenant", runExport},
	"import":    {"submit candidates from a JSON Lines file, in batches (to a running server, or --db)", runImport},
	"restore":   {"restore a signed snapshot (never revives retired or rejected ids)", runRestore},
	"bench":     {"run benchmarks: bench poison (the poisoning benchmark)", runBench},
	"mcp":       {"serve the MCP memory tools over stdio (on a store, or a running server with --url)", runMCP},
	"erase":     {"erase a memory of your own, or every memory of a user (--all-of)", runErase},
	"pause":     {"hold a writer's or a channel's writes for review: pause, pause list, pause resume ID", runPause},
	"version":   {"print the version of this binary", runVersion},
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "custody: a long-term memory server for LLM agents that cannot be quietly poisoned.\n\nUsage: custody <command> [flags]\n\nCommands:\n")
	names := make([]string, 0, len(verbs))
	for n := range verbs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, verbs[n].summary)
	}
	fmt.Fprintf(w, "\nRun 'custody <command> -h' for a command's flags.\n")
}

// usageError is a mistake in the command line; main prints it with a hint.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := execute(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// execute runs the command line args (without the program name) and returns
// the exit code: 0, 1 for a failure, 2 for a mistake in the command line,
// or the code a verb's error carries.
func execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) < 1 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) < 1 {
			return 2
		}
		return 0
	}
	v, ok := verbs[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "custody: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	err := v.run(ctx, args[1:], stdout, stderr)
	var ue usageError
	var ec interface{ ExitCode() int }
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "custody %s: %s\nRun 'custody %s -h' for usage.\n", args[0], ue.msg, args[0])
		return 2
	case errors.As(err, &ec):
		return ec.ExitCode()
	default:
		fmt.Fprintf(stderr, "custody %s: %v\n", args[0], err)
		if hint := connectionHint(err); hint != "" {
			fmt.Fprintln(stderr, hint)
		}
		return 1
	}
	return 0
}
