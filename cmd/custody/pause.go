package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/httpapi"
)

func runPause(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	sub := "set"
	if len(args) > 0 && (args[0] == "list" || args[0] == "resume") {
		sub, args = args[0], args[1:]
	}
	fs := flag.NewFlagSet("pause "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	cf := registerClientFlags(fs)
	var writer, channel, reason string
	var dur time.Duration
	var all bool
	switch sub {
	case "set":
		fs.StringVar(&writer, "writer", "", "the principal `name` whose writes are held")
		fs.StringVar(&channel, "channel", "", "the `channel` (tool:email) whose writes are held, tenant-wide")
		fs.DurationVar(&dur, "for", 0, "how long (90m, 2h); default: until resumed")
		fs.StringVar(&reason, "reason", "", "why; shown in the receipts of the held candidates (`text`, required)")
	case "list":
		fs.BoolVar(&all, "all", false, "list resumed and ended pauses too")
	}
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: custody pause --writer NAME | --channel C [--for DURATION] --reason TEXT [flags]\n"+
			"       custody pause list [--all] [flags]\n"+
			"       custody pause resume ID [flags]\n\n"+
			"Holds the writes of a principal, or of a channel tenant-wide, for review (an admin's or a reviewer's\n"+
			"token): its candidates are kept as quarantined with the pause named in their receipts. Logged.\n\n")
		fs.PrintDefaults()
	}
	rest, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if (sub == "resume") != (len(rest) == 1) || len(rest) > 1 {
		return usageError{"pause resume needs exactly one pause ID; pause and pause list take none"}
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	var ps []*custody.Pause
	switch sub {
	case "set":
		req := httpapi.PauseRequest{Writer: writer, Channel: channel, Reason: reason}
		if dur > 0 {
			req.For = dur.String()
		}
		p, err := c.Pause(ctx, req)
		if err != nil {
			return err
		}
		ps = []*custody.Pause{p}
	case "list":
		if ps, err = c.Pauses(ctx, all); err != nil {
			return err
		}
	case "resume":
		p, err := c.Resume(ctx, rest[0])
		if err != nil {
			return err
		}
		ps = []*custody.Pause{p}
	}
	if cf.json {
		if sub == "list" {
			return printJSON(stdout, httpapi.PausesResponse{Items: ps})
		}
		return printJSON(stdout, ps[0])
	}
	tw := table(stdout)
	fmt.Fprintln(tw, "ID\tHOLDS\tUNTIL\tRESUMED\tBY\tREASON")
	for _, p := range ps {
		holds := "writer " + p.Writer
		if p.Channel != "" {
			holds = "channel " + p.Channel
		}
		until, resumed := "until resumed", "-"
		if p.Until != nil {
			until = p.Until.Format(time.RFC3339)
		}
		if p.ResumedAt != nil {
			resumed = p.ResumedAt.Format(time.RFC3339) + " by " + p.ResumedBy
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", p.ID, holds, until, resumed, p.By, short(p.Reason, 40))
	}
	return tw.Flush()
}
