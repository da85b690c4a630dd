package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

func runExport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var sf storeFlags
	sf.register(fs)
	tenant := fs.String("tenant", "", "tenant `name` to export")
	out := fs.String("out", "", "snapshot `file` to write (\"-\" for stdout)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: custody export --tenant T --out FILE [--db FILE]\n\n"+
			"Writes a snapshot of one tenant signed by the server key: principals, every record with its\n"+
			"lineage and state, the registry of retired and rejected ids, and the checkpoint it was taken at.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *tenant == "" || *out == "" {
		return usageError{"--tenant and --out are required"}
	}
	svc, st, err := sf.open(ctx, stderr)
	if err != nil {
		return err
	}
	defer st.Close()
	w := stdout
	var f *os.File
	if *out != "-" {
		if f, err = os.CreateTemp(filepath.Dir(*out), ".export-*"); err != nil {
			return err
		}
		defer os.Remove(f.Name())
		w = f
	}
	fmt.Fprintf(stderr, "exporting tenant %s...\n", *tenant)
	p := newProgress(stderr, "exporting records")
	snap, err := svc.ExportProgress(ctx, *tenant, w, p.update)
	p.done()
	if err != nil {
		return err
	}
	if f != nil {
		if err := f.Close(); err != nil {
			return err
		}
		if err := os.Rename(f.Name(), *out); err != nil {
			return err
		}
	}
	fmt.Fprintf(stderr, "exported %d records, %d principals and %d registry entries of tenant %s\n", len(snap.Records), len(snap.Principals), len(snap.Registry), snap.Tenant)
	return nil
}
