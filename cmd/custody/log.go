package main

import (
	"context"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/custody-mem/custody/client"
)

func runLog(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	switch {
	case len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help"):
		fmt.Fprintf(stderr, "Usage: custody log checkpoint [--pin FILE --verifier KEY] [--json]\n"+
			"       custody log key --tenant NAME [--db FILE | --postgres DSN]\n"+
			"       custody log list [--db FILE | --postgres DSN] [--url URL]\n"+
			"       custody log monitor --url URL --verifier KEY --pin FILE [--witness VKEY]... [--once]\n\n"+
			"Commands:\n  checkpoint  print the server's signed checkpoint; with --pin, hold the server to the last one seen\n"+
			"  key         print the checkpoint verifier key of a tenant's log (of a running server, or of a store with --db)\n"+
			"  list        print every tenant's log (origin, verifier key, URL) as a C2SP tlog-list for witnesses and monitors\n"+
			"  monitor     follow a tenant's log from its tiles: consistency, witnesses, and each new entry, checked and printed\n\n"+
			"Run 'custody log checkpoint -h', 'custody log key -h', 'custody log list -h' or 'custody log monitor -h' for their flags.\n")
		return flag.ErrHelp
	case len(args) > 0 && args[0] == "key":
		return runLogKey(ctx, args[1:], stdout, stderr)
	case len(args) > 0 && args[0] == "list":
		return runLogList(ctx, args[1:], stdout, stderr)
	case len(args) > 0 && args[0] == "monitor":
		return runLogMonitor(ctx, args[1:], stdout, stderr)
	case len(args) == 0 || args[0] != "checkpoint":
		return usageError{"the subcommands are 'checkpoint', 'key', 'list' and 'monitor': custody log checkpoint [--pin FILE --verifier KEY], custody log key --tenant NAME, custody log list, custody log monitor --url URL --verifier KEY --pin FILE"}
	}
	fs := flag.NewFlagSet("log checkpoint", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cf := registerClientFlags(fs)
	pinFile := fs.String("pin", os.Getenv("CUSTODY_PIN"), "pin `file`: the newest checkpoint seen; the server's must extend it, and replaces it (default $CUSTODY_PIN)")
	vkey := fs.String("verifier", os.Getenv("CUSTODY_VERIFIER_KEY"), "verifier `key` of your tenant's log (custody log key --tenant NAME prints it), origin+hash+base64; required with --pin (default $CUSTODY_VERIFIER_KEY)")
	policyFile := policyFlag(fs, "that the server's checkpoint must carry to be pinned (with --pin)")
	maxAge := fs.Duration("max-age", client.DefaultMaxAge, "with --witness-policy, how old the counted cosignatures may be (a server frozen on an old checkpoint shows old ones)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: custody log checkpoint [--pin FILE --verifier KEY [--witness-policy FILE]] [--json]\n\n"+
			"Prints the signed checkpoint of the log of your tenant on the server at $CUSTODY_URL (with\n$CUSTODY_TOKEN); each tenant's log is a tree of its own, with its own origin and key name.\n"+
			"With --pin, it first checks the checkpoint's signature and that the log extends the one\n"+
			"saved in FILE (a consistency proof from the server), then saves it there: a server whose\n"+
			"store was rolled back or rewritten since fails with exit 1, and FILE is kept. The pin file\n"+
			"is a checkpoint custody verify --checkpoint FILE also takes. With --witness-policy, the checkpoint\n"+
			"must also carry fresh cosignatures (--max-age) of the witnesses the policy's quorum asks for.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	if *pinFile == "" {
		note, err := c.Checkpoint(ctx)
		if err != nil {
			return err
		}
		_, err = stdout.Write(note)
		return err
	}
	if *vkey == "" {
		return usageError{"--pin needs --verifier KEY (or $CUSTODY_VERIFIER_KEY): the verifier key of your tenant's log, which custody log key --tenant NAME prints"}
	}
	saved, err := os.ReadFile(*pinFile)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("reading the pin file: %w", err)
	}
	policy, err := readPolicy(*policyFile)
	if err != nil {
		return err
	}
	pin, err := client.NewPinWith(c, strings.TrimSpace(*vkey), saved, client.PinOptions{Policy: policy, MaxAge: *maxAge})
	if err != nil {
		return fmt.Errorf("%w (pin file %s)", err, *pinFile)
	}
	prev, pinned := pin.Pinned()
	cp, err := pin.Checkpoint(ctx)
	if errors.Is(err, client.ErrNotWitnessed) {
		return fmt.Errorf("%w\nThe pin file %s is kept. A server with a witness policy serves only checkpoints that met it: if it has one, its\n"+
			"witnesses have not cosigned recently (are they up?), or they refuse its log; if it has none, its checkpoints are not witnessed.", err, *pinFile)
	}
	if errors.Is(err, client.ErrLogInconsistent) {
		return fmt.Errorf("%w\nThe server's store was rolled back or rewritten since the checkpoint pinned in %s; that file is kept as evidence.\n"+
			"Tell the server's operator: custody verify --checkpoint %s on the store shows the same.", err, *pinFile, *pinFile)
	}
	if err != nil {
		return err
	}
	if err := writePin(*pinFile, pin.Note()); err != nil {
		return err
	}
	if cf.json {
		out := pinAnswer{Origin: cp.Origin, Size: cp.Size, Root: base64.StdEncoding.EncodeToString(cp.Root), PinFile: *pinFile}
		if pinned {
			out.PinnedBefore = &prev.Size
		}
		return printJSON(stdout, out)
	}
	if pinned {
		fmt.Fprintf(stdout, "ok: the log (%d entries, root %s) extends the pinned checkpoint of %d entries; pinned it in %s\n",
			cp.Size, base64.StdEncoding.EncodeToString(cp.Root), prev.Size, *pinFile)
	} else {
		fmt.Fprintf(stdout, "ok: pinned the log (%d entries, root %s) in %s\n", cp.Size, base64.StdEncoding.EncodeToString(cp.Root), *pinFile)
	}
	return nil
}

// pinAnswer is what --json prints after a pin.
type pinAnswer struct {
	Origin       string  `json:"origin"`
	Size         uint64  `json:"size"`
	Root         string  `json:"root"`
	PinFile      string  `json:"pin_file"`
	PinnedBefore *uint64 `json:"pinned_before"` // size of the checkpoint it extends; null on the first pin
}

// writePin replaces the pin file atomically, so a crash leaves the old pin
// or the new one, never a torn file.
func writePin(path string, note []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".pin-*")
	if err != nil {
		return fmt.Errorf("saving the pin: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(note); err != nil {
		tmp.Close()
		return fmt.Errorf("saving the pin: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("saving the pin: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("saving the pin: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("saving the pin: %w", err)
	}
	return nil
}

// runLogKey prints the checkpoint verifier key: of the store named by
// --db or --postgres (from its server key file), or else of the running
// server at --url (GET /v1/log/key, which needs no token).
func runLogKey(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("log key", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var sf storeFlags
	sf.register(fs)
	existingStore(fs)
	cf := registerClientFlags(fs)
	tenant := fs.String("tenant", "", "the `tenant` whose log the key verifies (required)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: custody log key --tenant NAME [--url URL | --db FILE | --postgres DSN]\n\n"+
			"Prints the verifier key of the signed checkpoints of the tenant's log (a C2SP signed-note\n"+
			"vkey: origin+hash+base64 key; each tenant's log has its own origin, which names the key).\n"+
			"With --db or --postgres it is read from the store's server key file and log name; otherwise\n"+
			"it is fetched from the server at --url, no token needed. Pin the key from a source you\n"+
			"trust (the store's own files, the operator), not from the server you check.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	if *tenant == "" {
		return usageError{"name the tenant whose log's key to print: custody log key --tenant NAME (each tenant's log has its own key name)"}
	}
	offline := false
	fs.Visit(func(f *flag.Flag) { offline = offline || f.Name == "db" || f.Name == "postgres" || f.Name == "key" })
	offline = offline || sf.postgres != ""
	if !offline {
		key, err := client.New(cf.url, "").LogKey(ctx, *tenant)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(stdout, key)
		return err
	}
	if err := requireStore(sf); err != nil {
		return err
	}
	svc, st, err := sf.open(ctx, stderr)
	if err != nil {
		return err
	}
	defer st.Close()
	key, err := svc.VerifierKey(*tenant)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, key)
	return err
}
