package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/custody-mem/custody/logmonitor"
)

// DefaultMonitorInterval is how often custody log monitor looks at the
// log when it follows it.
const DefaultMonitorInterval = 30 * time.Second

// runLogMonitor follows a tenant's log from outside: see package
// logmonitor, which is written from docs/log-format.md alone.
func runLogMonitor(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("log monitor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("url", "", "the log's `URL`: its C2SP tlog-tiles prefix, https://server/log/<ID> (custody log list prints it; GET /v1/log/status gives the path)")
	vkey := fs.String("verifier", os.Getenv("CUSTODY_VERIFIER_KEY"), "the log's verifier `key` (origin+hash+base64; default $CUSTODY_VERIFIER_KEY)")
	pinFile := fs.String("pin", os.Getenv("CUSTODY_PIN"), "pin `file`: the newest checkpoint verified; the log must extend it, and replaces it (default $CUSTODY_PIN)")
	var witnesses listFlag
	fs.Var(&witnesses, "witness", "a witness's verifier `VKEY` whose cosignatures count (repeatable)")
	minWitnesses := fs.Int("min-witnesses", 0, "how many of the --witness keys must have cosigned each checkpoint (default: all)")
	maxAge := fs.Duration("max-age", logmonitor.DefaultMaxAge, "how old the counted cosignatures may be")
	once := fs.Bool("once", false, "look once and exit (0: the log is in order; 1: it is not, or could not be read)")
	interval := fs.Duration("interval", DefaultMonitorInterval, "how often to look when following the log")
	asJSON := fs.Bool("json", false, "print one JSON object a line: {\"checkpoint\":…} or {\"index\":…, \"entry\":…}")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: custody log monitor --url URL --verifier KEY --pin FILE [--witness VKEY]... [--once]\n\n"+
			"Follows a tenant's log from its C2SP tlog-tiles, as docs/log-format.md describes it, trusting\n"+
			"nothing of the server: each checkpoint must be signed by the log's key (and cosigned by the\n"+
			"--witness keys, recently), and be proved by the hash tiles to extend the one pinned in FILE.\n"+
			"With $CUSTODY_TOKEN, an admin's or auditor's token of the tenant, it also reads every new entry\n"+
			"from the entry bundles, proves it in the tree, checks its signature, decodes it and prints it.\n"+
			"A log that does not extend the pin (rolled back, or its history rewritten) is reported with\n"+
			"exit 1 and the pin file kept as evidence. It follows the log every --interval until stopped,\n"+
			"or looks once with --once.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	case *url == "":
		return usageError{"--url is required: the log's URL, https://server/log/<ID> (custody log list prints it)"}
	case *vkey == "":
		return usageError{"--verifier is required: the log's verifier key (custody log list prints it)"}
	case *pinFile == "":
		return usageError{"--pin FILE is required: where the monitor keeps the newest checkpoint it verified"}
	case *interval <= 0:
		return usageError{fmt.Sprintf("--interval %v must be positive", *interval)}
	}
	saved, err := os.ReadFile(*pinFile)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("reading the pin file: %w", err)
	}
	m, err := logmonitor.New(logmonitor.Options{URL: *url, VerifierKey: *vkey, Witnesses: witnesses, MinWitnesses: *minWitnesses,
		MaxAge: *maxAge, Token: strings.TrimSpace(os.Getenv("CUSTODY_TOKEN"))}, saved)
	if err != nil {
		return fmt.Errorf("%w (pin file %s)", err, *pinFile)
	}
	report := func(ev logmonitor.Event) {
		if *asJSON {
			b, _ := json.Marshal(ev)
			fmt.Fprintf(stdout, "%s\n", b)
			return
		}
		if cp := ev.Checkpoint; cp != nil {
			cosigned := ""
			if len(cp.Witnesses) > 0 {
				cosigned = ", cosigned by " + strings.Join(cp.Witnesses, ", ")
			}
			fmt.Fprintf(stdout, "checkpoint: %s, %d entries, root %s%s\n", cp.Origin, cp.Size, cp.Root, cosigned)
			return
		}
		fmt.Fprintf(stdout, "entry %d at %s: %s\n", ev.Index, ev.Entry.Time.Format(time.RFC3339), ev.Entry.Summary())
	}
	for {
		err := m.Step(ctx, report)
		switch {
		case errors.Is(err, logmonitor.ErrInconsistent), errors.Is(err, logmonitor.ErrBadEntry):
			return fmt.Errorf("ALERT: %w\nThe pin file %s is kept as evidence: it is a checkpoint the server signed, which custody verify --checkpoint also takes.\n"+
				"Tell the server's operator, and the tenant's admins.", err, *pinFile)
		case err == nil:
			if err := writePin(*pinFile, m.Pinned()); err != nil {
				return err
			}
		case *once:
			return err
		default:
			fmt.Fprintf(stderr, "custody log monitor: %v (looking again in %v)\n", err, *interval)
		}
		if *once {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(*interval):
		}
	}
}
