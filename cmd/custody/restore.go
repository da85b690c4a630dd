package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
)

func runRestore(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("restore", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var sf storeFlags
	sf.register(fs)
	in := fs.String("in", "", "snapshot `file` written by custody export (\"-\" for stdin)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: custody restore --in FILE [--db FILE]\n\n"+
			"Verifies a snapshot's signature and checkpoint and restores it. Records already in the store\n"+
			"are kept as they are; retired, rejected and suspended ids never become eligible again.\n"+
			"Every restored principal and record is a log entry.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *in == "" {
		return usageError{"--in is required"}
	}
	var data []byte
	var err error
	if *in == "-" {
		data, err = io.ReadAll(os.Stdin)
	} else {
		data, err = os.ReadFile(*in)
	}
	if err != nil {
		return err
	}
	svc, st, err := sf.open(ctx, stderr)
	if err != nil {
		return err
	}
	defer st.Close()
	p := newProgress(stderr, "restoring records")
	rep, err := svc.Restore(ctx, data, p.update)
	p.done()
	if err != nil {
		return err
	}
	if _, err := svc.Checkpoint(ctx); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "restored tenant %s: %d principals, %d records (%d already present, %d kept ineligible by the registry)\n",
		rep.Tenant, rep.Principals, rep.Restored, rep.Skipped, len(rep.Withheld))
	return nil
}
