package main

import (
	"context"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	custody "github.com/custody-mem/custody"
)

func runVerify(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var sf storeFlags
	sf.register(fs)
	var cps checkpointFlags
	cps.register(fs)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: custody verify [--db FILE] [--checkpoint FILE]...\n\n"+
			"Recomputes the Merkle tree from the log, checks every signature and checkpoint, replays the log\n"+
			"into the state of every record and compares it with the store. Exit 0 only when all agree.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	notes, err := cps.read(sf)
	if err != nil {
		return err
	}
	svc, st, err := sf.open(ctx, stderr)
	if err != nil {
		return err
	}
	defer st.Close()
	p := newProgress(stderr, "verifying log entries")
	rep, err := svc.Verify(ctx, custody.VerifyOptions{Checkpoints: notes, Progress: p.update})
	p.done()
	var d *custody.Difference
	if errors.As(err, &d) && d.Derived {
		return fmt.Errorf("the store and its log disagree: %s\n(the records match their log, but what the store derives from them for speed was changed outside custody: run custody reindex, with the same store flags, to rebuild it from the records)", d.What)
	}
	if errors.As(err, &d) {
		return fmt.Errorf("the store and its log disagree: %s\n%s", d.What, restoreAdvice)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "ok: %d log entries, %d records, %d principals and %d checkpoints agree; root %s\n",
		rep.Entries, rep.Records, rep.Principals, rep.Checkpoints, base64.StdEncoding.EncodeToString(rep.Root))
	return nil
}

// restoreAdvice is what to do when the records or the log were changed.
const restoreAdvice = "(the database was changed outside custody: compare it with a snapshot or a backup, and restore one taken before the change)"

// checkpointFlags are the --checkpoint files of verify and reindex.
type checkpointFlags struct{ files multiFlag }

func (c *checkpointFlags) register(fs *flag.FlagSet) {
	fs.Var(&c.files, "checkpoint", "a signed checkpoint `file` saved earlier; the log must be consistent with it (repeat for several)")
}

// read returns the store's own saved checkpoint, if any, and the
// checkpoint files named on the command line.
func (c *checkpointFlags) read(sf storeFlags) ([][]byte, error) {
	if _, err := os.Stat(sf.db); err != nil && sf.postgres == "" {
		return nil, fmt.Errorf("no store at %s: %w", sf.db, err)
	}
	var notes [][]byte
	own, err := custody.ReadCheckpointFile(sf.checkpointPath())
	if err != nil {
		return nil, err
	}
	if own != nil {
		notes = append(notes, own)
	}
	for _, f := range c.files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("reading checkpoint: %w", err)
		}
		notes = append(notes, b)
	}
	return notes, nil
}
