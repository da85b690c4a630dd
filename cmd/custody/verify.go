package main

import (
	"context"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	custody "github.com/custody-mem/custody"
)

func runVerify(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var sf storeFlags
	sf.register(fs)
	existingStore(fs)
	var cps checkpointFlags
	cps.register(fs)
	var wf verifyWitnesses
	wf.register(fs)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: custody verify [--db FILE | --postgres DSN] [--checkpoint FILE]...\n\n"+
			"Recomputes the Merkle tree from the log, checks every signature and checkpoint, replays the log\n"+
			"into the state of every record and compares it with the store. Exit 0 only when all agree.\n"+
			"It reads the store in one snapshot, so it may run while a server writes to the store.\n"+
			"It checks the log against the checkpoint file beside the store and warns when that file is\n"+
			"missing; a store rolled back together with that file is caught only by a checkpoint saved\n"+
			"elsewhere (--checkpoint, or the pin file of custody log checkpoint --pin).\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	if err := requireStore(sf); err != nil {
		return err
	}
	svc, st, err := sf.open(ctx, stderr)
	if err != nil {
		return err
	}
	defer st.Close()
	notes, err := cps.read(sf) // the checkpoint file is named after the open store
	if err != nil {
		return err
	}
	published, err := publishedNotes(ctx, svc)
	if err != nil {
		return err
	}
	notes = append(notes, published...)
	p := newProgress(stderr, "verifying log entries")
	rep, err := svc.Verify(ctx, custody.VerifyOptions{Checkpoints: notes, Progress: p.update})
	p.done()
	if err == nil {
		err = wf.check(ctx, svc)
	}
	recordOutcome(sf, rep, err, stderr)
	var d *custody.Difference
	if err != nil {
		printLogs(stdout, rep)
	}
	if errors.As(err, &d) && d.Derived {
		return fmt.Errorf("the store and its log disagree: %s\n(the records match their log, but what the store derives from them for speed was changed outside custody: run custody reindex, with the same store flags, to rebuild it from the records)", d.What)
	}
	if errors.As(err, &d) && d.Tenant != "" {
		return fmt.Errorf("the store and its log disagree: in %s's log, %s\n%s", d.Tenant, d.What, restoreAdvice)
	}
	if errors.As(err, &d) {
		return fmt.Errorf("the store and its log disagree: %s\n%s", d.What, restoreAdvice)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "ok: %d log entries in %d tenants' logs, %d records, %d principals and %d checkpoints agree\n",
		rep.Entries, len(rep.Logs), rep.Records, rep.Principals, rep.Checkpoints)
	printLogs(stdout, rep)
	if len(rep.Uncovered) > 0 {
		fmt.Fprintf(stderr, "custody verify: note: the log does not cover %d things, so they could not be checked:\n", len(rep.Uncovered))
		for _, u := range rep.Uncovered {
			fmt.Fprintf(stderr, "  %s\n", u)
		}
	}
	for _, l := range rep.Logs {
		if len(l.Oversize) > 0 {
			fmt.Fprintf(stderr, "custody verify: WARNING: %s's log holds entries longer than %d bytes (indexes %s): they are in the tree and verify, "+
				"and proofs, checkpoints and hash tiles cover them, but no C2SP entry bundle can hold one, so the entry bundle of each answers an error "+
				"and tlog-tiles readers cannot read the entries past it. Such entries were accepted before custody bounded them; see \"Limits\" in docs/operations.md\n",
				l.Tenant, custody.MaxLeafBytes, joinIndexes(l.Oversize))
		}
	}
	if w, err := missingCheckpointWarning(ctx, svc, sf, rep, len(cps.files)); err != nil {
		return err
	} else if w != "" {
		fmt.Fprintf(stderr, "custody verify: WARNING: %s\n", w)
	}
	return nil
}

// recordOutcome writes what verify found beside the checkpoint file, for
// the server to report (GET /v1/log/status, the console). A file that
// cannot be written is a warning: the exit code is the outcome that counts.
func recordOutcome(sf storeFlags, rep *custody.VerifyReport, err error, stderr io.Writer) {
	st := custody.VerifyStatus{At: time.Now().UTC(), OK: err == nil}
	if rep != nil {
		st.Entries, st.Logs = rep.Entries, rep.Logs
	}
	var d *custody.Difference
	switch {
	case errors.As(err, &d):
		st.Problem = d.What
	case err != nil:
		st.Problem = err.Error()
	}
	if werr := custody.WriteVerifyStatus(sf.verifyStatusPath(), st); werr != nil {
		fmt.Fprintf(stderr, "custody verify: could not record the outcome for the server to report: %v\n", werr)
	}
}

// printLogs prints one line per tenant's log: its origin, size and root,
// or the difference found in it.
func printLogs(w io.Writer, rep *custody.VerifyReport) {
	if rep == nil {
		return
	}
	for _, l := range rep.Logs {
		if l.Problem != "" {
			fmt.Fprintf(w, "  %s: DIFFERS (%s): %s\n", l.Tenant, l.Origin, l.Problem)
			continue
		}
		fmt.Fprintf(w, "  %s: ok (%s): %d entries, %d checkpoints, root %s\n", l.Tenant, l.Origin, l.Entries, l.Checkpoints, base64.StdEncoding.EncodeToString(l.Root))
	}
	if rep.Legacy > 0 {
		fmt.Fprintf(w, "  the log all tenants shared before one log per tenant: %d entries, rebuilt from the tenants' logs\n", rep.Legacy)
	}
}

// joinIndexes lists log indexes for a message.
func joinIndexes(ix []uint64) string {
	s := make([]string, len(ix))
	for i, n := range ix {
		s[i] = strconv.FormatUint(n, 10)
	}
	return strings.Join(s, ", ")
}

// existingStore says in --db's help that verify opens a store, never
// creates one.
func existingStore(fs *flag.FlagSet) {
	fs.Lookup("db").Usage = "SQLite database `file` of the store to check (must exist; never created)"
}

// requireStore refuses a store or server key that does not exist, rather
// than let opening the store create them.
func requireStore(sf storeFlags) error {
	if sf.postgres == "" {
		if _, err := os.Stat(sf.db); errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("no store at %s: give the database file of an existing store with --db (or --postgres DSN); nothing was created", sf.db)
		} else if err != nil {
			return fmt.Errorf("store %s: %w", sf.db, err)
		}
	}
	if _, err := os.Stat(sf.keyPath()); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("no server key at %s: verify needs the key the store was created with (--key FILE); nothing was created", sf.keyPath())
	} else if err != nil {
		return fmt.Errorf("server key %s: %w", sf.keyPath(), err)
	}
	return nil
}

// missingCheckpointWarning is what to say when the checkpoint file beside
// the store is missing although the log has entries: verify then had
// nothing outside the database to hold the log to, unless extra
// checkpoints were given.
func missingCheckpointWarning(ctx context.Context, svc *custody.Service, sf storeFlags, rep *custody.VerifyReport, extra int) (string, error) {
	path := sf.checkpointPath()
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) || rep.Entries == 0 {
		return "", nil
	}
	what := fmt.Sprintf("no checkpoint file at %s, although the log has %d entries", path, rep.Entries)
	p, err := svc.CheckPublished(ctx)
	if errors.Is(err, custody.ErrRolledBack) || err == nil && p.HasStored {
		what += " and the store holds checkpoints a server published (the file may have been removed to hide a rollback;" +
			" custody serve refuses to start on this store)"
	} else if err != nil {
		return "", err
	}
	if extra > 0 {
		return what + ".\nThe log was checked against the checkpoints given with --checkpoint only.", nil
	}
	return what + ".\nA store rolled back to an older copy would pass this verify: check it against a checkpoint" +
		" saved elsewhere with --checkpoint FILE (such as a pin file of custody log checkpoint --pin).", nil
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
