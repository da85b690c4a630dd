package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	custody "github.com/custody-mem/custody"
)

func runImpact(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("impact", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var sf storeFlags
	sf.register(fs)
	cf := registerClientFlags(fs)
	var tenant string
	fs.StringVar(&tenant, "tenant", "", "with --db or --postgres: the `tenant` of the memory (a server uses the token's own)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: custody impact ID [flags]\n\n"+
			"Lists what a suspect memory reached: its descendants (what the cascade suspends when it is\n"+
			"quarantined or retired), the sessions whose get, list or search returned it or a descendant\n"+
			"(within the server's --read-retention), and the gate decisions that cited it or traced an\n"+
			"argument value to it, with times. On the running server at $CUSTODY_URL with a reviewer's or\n"+
			"an admin's $CUSTODY_TOKEN, or on the store itself with --db FILE or --postgres DSN and --tenant T.\n\n")
		fs.PrintDefaults()
	}
	rest, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usageError{"give exactly one memory ID"}
	}
	offline, err := storeOrServer(fs)
	if err != nil {
		return err
	}
	switch {
	case offline && tenant == "":
		return usageError{"with --db or --postgres, --tenant names the tenant of the memory"}
	case !offline && tenant != "":
		return usageError{"--tenant is for --db or --postgres; a server uses the tenant of $CUSTODY_TOKEN"}
	}
	var imp *custody.Impact
	if offline {
		svc, st, err := sf.open(ctx, stderr)
		if err != nil {
			return err
		}
		defer st.Close()
		if imp, err = svc.ImpactOf(ctx, tenant, rest[0]); err != nil {
			return fmt.Errorf("memory %s of tenant %s: %w", rest[0], tenant, err)
		}
	} else {
		c, err := cf.client()
		if err != nil {
			return err
		}
		if imp, err = c.Impact(ctx, rest[0]); err != nil {
			return err
		}
	}
	if cf.json {
		return printJSON(stdout, imp)
	}
	return printImpact(stdout, imp)
}

// printImpact prints the record, then its descendants, sessions and
// decisions as tables.
func printImpact(w io.Writer, imp *custody.Impact) error {
	r := imp.Record
	fmt.Fprintf(w, "%s  %s  %s  %s  authority=%s  channel=%s  owner=%s\n", r.ID, impactWhere(r), r.Class, r.State, r.Authority, r.Channel, r.Owner)
	fmt.Fprintf(w, "\ndescendants: %d\n", len(imp.Descendants))
	if len(imp.Descendants) > 0 {
		tw := table(w)
		fmt.Fprintln(tw, "ID\tNAMESPACE/KEY\tCLASS\tSTATE\tCHANNEL\tOWNER")
		for _, d := range imp.Descendants {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", d.ID, impactWhere(d), d.Class, d.State, d.Channel, d.Owner)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "\nsessions that read it: %d (reads kept since %s)\n", len(imp.Sessions), imp.ReadsSince.Format(time.RFC3339))
	if len(imp.Sessions) > 0 {
		tw := table(w)
		fmt.Fprintln(tw, "SESSION\tSUBJECT\tOPENED BY\tREAD\tVIA\tREADS\tFIRST\tLAST")
		for _, s := range imp.Sessions {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", s.Session, s.Subject, s.OpenedBy, s.Record, strings.Join(s.Via, ","), s.Reads,
				s.FirstAt.Format(time.RFC3339), s.LastAt.Format(time.RFC3339))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "\ngate decisions that relied on it: %d\n", len(imp.Decisions))
	if len(imp.Decisions) > 0 {
		tw := table(w)
		fmt.Fprintln(tw, "LOG ENTRY\tACTION\tDECISION\tRECORD\tHOW\tSUBJECT\tSESSION\tAT")
		for _, d := range imp.Decisions {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", d.LogIndex, d.Action, d.Decision, d.Record, d.How, d.Subject, orDash(d.Session), d.At.Format(time.RFC3339))
		}
		return tw.Flush()
	}
	return nil
}

func impactWhere(r custody.ImpactRecord) string {
	if r.Key == "" {
		return r.Namespace
	}
	return r.Namespace + "/" + r.Key
}
