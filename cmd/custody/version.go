package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// runVersion prints the version of the binary: the module version it was
// installed at (go install .../cmd/custody@v0.3.1), or the commit it was
// built from in a checkout.
func runVersion(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: custody version\n\nPrints the version of this binary and the Go it was built with.\n")
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{"version takes no arguments"}
	}
	fmt.Fprintf(stdout, "custody %s (%s)\n", binaryVersion(), runtime.Version())
	return nil
}

// binaryVersion is the module version of the build, or the commit of a
// build from a checkout, or "devel".
func binaryVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	switch {
	case rev == "":
		return "devel"
	case dirty:
		return "devel " + rev[:min(12, len(rev))] + "+modified"
	}
	return "devel " + rev[:min(12, len(rev))]
}
