package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/custody-mem/custody/httpapi"
)

func runReview(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	sub := "list"
	if len(args) > 0 && (args[0] == "list" || args[0] == "approve" || args[0] == "reject") {
		sub, args = args[0], args[1:]
	} else if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		return usageError{fmt.Sprintf("unknown review subcommand %q; use list, approve ID or reject ID", args[0])}
	}
	fs := flag.NewFlagSet("review "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	cf := registerClientFlags(fs)
	var limit int
	var cursor, reason string
	if sub == "list" {
		fs.IntVar(&limit, "limit", 0, "at most `n` candidates (server default 50)")
		fs.StringVar(&cursor, "cursor", "", "the `cursor` printed after the previous page")
	}
	if sub == "reject" {
		fs.StringVar(&reason, "reason", "", "why, kept in the receipt and the log (`text`)")
	}
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: custody review [list] [--limit N] [--cursor C] [flags]\n"+
			"       custody review approve ID [flags]\n"+
			"       custody review reject ID [--reason TEXT] [flags]\n\n"+
			"The review queue (reviewer or admin token): quarantined candidates with their source,\n"+
			"writer and proposed effect; approve admits one with authority confirmed.\n\n")
		fs.PrintDefaults()
	}
	rest, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	switch {
	case sub == "list" && len(rest) > 0:
		return usageError{"review list takes no arguments"}
	case sub != "list" && len(rest) != 1:
		return usageError{fmt.Sprintf("review %s needs exactly one memory ID", sub)}
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	if sub != "list" {
		var rec any
		if sub == "approve" {
			r, err := c.Approve(ctx, rest[0], cf.subject)
			if err != nil {
				return err
			}
			rec = r
			if !cf.json {
				fmt.Fprintf(stdout, "%s  %s  authority %s\n", r.ID, r.State, r.Authority)
			}
		} else {
			r, err := c.Reject(ctx, rest[0], httpapi.RejectRequest{Reason: reason, Subject: cf.subject})
			if err != nil {
				return err
			}
			rec = r
			if !cf.json {
				fmt.Fprintf(stdout, "%s  %s\n", r.ID, r.State)
			}
		}
		if cf.json {
			return printJSON(stdout, rec)
		}
		return nil
	}
	q, err := c.ReviewQueue(ctx, cf.subject, cursor, limit)
	if err != nil {
		return err
	}
	if cf.json {
		return printJSON(stdout, q)
	}
	if len(q.Items) == 0 {
		fmt.Fprintln(stderr, "custody: the review queue is empty")
		return nil
	}
	tw := table(stdout)
	fmt.Fprintln(tw, "ID\tOWNER\tNAMESPACE/KEY\tCLASS\tCHANNEL\tWRITER\tSOURCE\tAUDIENCE\tPROPOSED")
	for _, it := range q.Items {
		proposed := short(it.Body, 50)
		if it.Proposed != nil {
			old := "(none)"
			if it.Proposed.Old != nil {
				old = short(*it.Proposed.Old, 30)
			}
			proposed = old + " -> " + short(it.Proposed.New, 30)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", it.ID, it.Owner, nsKey(it.Record), it.Class, it.Channel,
			it.Writer, orDash(it.SourceRef), it.Audience, proposed)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if q.NextCursor != "" {
		fmt.Fprintf(stderr, "custody: more with --cursor %s\n", q.NextCursor)
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
