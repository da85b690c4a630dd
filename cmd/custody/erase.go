package main

import (
	"context"
	"flag"
	"fmt"
	"io"
)

func runErase(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("erase", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cf := registerClientFlags(fs)
	var whole, reason string
	var retire bool
	fs.StringVar(&whole, "all-of", "", "erase every memory of this `user` (an admin's token, or the user's own) instead of one")
	fs.StringVar(&reason, "reason", "", "why, kept in the log (`text`, an erasure request's reference)")
	fs.BoolVar(&retire, "retire-only", false, "retire the memory (it leaves retrieval for good) and keep its body for history")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: custody erase ID [--retire-only] [--reason TEXT] [flags]\n"+
			"       custody erase --all-of USER [--reason TEXT] [flags]\n\n"+
			"Erases a memory of your own (your $CUSTODY_TOKEN): its body and salt are removed, and with them\n"+
			"its search entries; the log keeps that it existed and was erased, and verify passes. With\n"+
			"--all-of, erases the body of every memory the user owns and prints the receipt of what was erased.\n\n")
		fs.PrintDefaults()
	}
	rest, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	switch {
	case whole == "" && len(rest) != 1:
		return usageError{"erase needs exactly one memory ID, or --all-of USER"}
	case whole != "" && (len(rest) > 0 || retire):
		return usageError{"--all-of takes no memory ID and no --retire-only"}
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	if whole != "" {
		rc, err := c.EraseSubject(ctx, whole, reason)
		if err != nil {
			return err
		}
		if cf.json {
			return printJSON(stdout, rc)
		}
		tw := table(stdout)
		fmt.Fprintln(tw, "ID\tNAMESPACE/KEY\tCLASS\tSTATE\tLOG ENTRY")
		for _, r := range rc.Erased {
			nk := r.Namespace
			if r.Key != "" {
				nk += "/" + r.Key
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\n", r.ID, nk, r.Class, r.State, r.LogIndex)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "custody: %s; %d derived memories of others suspended\n", rc, len(rc.Suspended))
		return nil
	}
	ids, err := c.Forget(ctx, rest[0], reason, !retire)
	if err != nil {
		return err
	}
	if cf.json {
		return printJSON(stdout, map[string][]string{"affected": ids})
	}
	for _, id := range ids {
		fmt.Fprintln(stdout, id)
	}
	what := "erased"
	if retire {
		what = "retired"
	}
	fmt.Fprintf(stderr, "custody: %s %s (%d derived memories suspended)\n", what, rest[0], len(ids)-1)
	return nil
}
