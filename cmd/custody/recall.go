package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/client"
)

func runRecall(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("recall", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cf := registerClientFlags(fs)
	var o client.ListOptions
	var history bool
	fs.StringVar(&o.Namespace, "namespace", "", "only this `namespace`")
	fs.StringVar(&o.Key, "key", "", "only this `key`")
	fs.StringVar(&o.Class, "class", "", "only this `class`: preference, fact, episode or procedure")
	var ff filterFlags
	ff.register(fs)
	fs.IntVar(&o.Limit, "limit", 0, "at most `n` records (server default 50, at most 500)")
	fs.StringVar(&o.Cursor, "cursor", "", "the `cursor` printed after the previous page")
	fs.BoolVar(&history, "history", false, "with an ID: every version of the record's key, with receipts")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: custody recall ID [--history] [flags]\n"+
			"       custody recall [--namespace NS] [--key K | --key-prefix P] [--class C] [--created-after T]\n"+
			"                      [--created-before T] [--metadata K=V]... [--limit N] [--cursor C] [flags]\n\n"+
			"With an ID, prints that memory with its provenance; without, lists the eligible memories,\n"+
			"the newest version per key, newest first.\n\n")
		fs.PrintDefaults()
	}
	rest, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 1 {
		return usageError{"give at most one memory ID"}
	}
	if history && len(rest) == 0 {
		return usageError{"--history needs a memory ID"}
	}
	o.KeyPrefix, o.CreatedAfter, o.CreatedBefore = ff.keyPrefix, ff.after, ff.before
	if o.Metadata, err = metadataMap("metadata", ff.metadata); err != nil {
		return err
	}
	o.Subject = cf.subject
	c, err := cf.client()
	if err != nil {
		return err
	}
	switch {
	case history:
		vs, err := c.History(ctx, rest[0], cf.subject)
		if err != nil {
			return err
		}
		if cf.json {
			return printJSON(stdout, map[string]any{"items": vs})
		}
		return printRecords(stdout, vs, true)
	case len(rest) == 1:
		r, err := c.Get(ctx, rest[0], cf.subject)
		if err != nil {
			return err
		}
		if cf.json {
			return printJSON(stdout, r)
		}
		return printRecord(stdout, r)
	}
	page, err := c.List(ctx, o)
	if err != nil {
		return err
	}
	if cf.json {
		return printJSON(stdout, page)
	}
	if err := printRecords(stdout, page.Items, false); err != nil {
		return err
	}
	if page.NextCursor != "" {
		fmt.Fprintf(stderr, "custody: more with --cursor %s\n", page.NextCursor)
	}
	return nil
}

// printRecords prints records as an aligned table; with states, the state
// and receipt reason columns are added (history).
func printRecords(w io.Writer, rs []*custody.Record, states bool) error {
	tw := table(w)
	if states {
		fmt.Fprintln(tw, "ID\tVERSION\tSTATE\tAUTHORITY\tCHANNEL\tWRITER\tCREATED\tBODY\tREASON")
	} else {
		fmt.Fprintln(tw, "ID\tNAMESPACE/KEY\tCLASS\tAUTHORITY\tCHANNEL\tCREATED\tBODY")
	}
	for _, r := range rs {
		if states {
			reason := ""
			if r.Receipt != nil {
				reason = r.Receipt.Reason
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Version, r.State, r.Authority, r.Channel, r.Writer,
				when(r.CreatedAt), short(r.Body, 40), short(reason, 50))
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, nsKey(r), r.Class, r.Authority, r.Channel, when(r.CreatedAt), short(r.Body, 60))
	}
	return tw.Flush()
}

// printRecord prints one record, field by field.
func printRecord(w io.Writer, r *custody.Record) error {
	tw := table(w)
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(tw, "%s\t%s\n", k, v)
		}
	}
	row("id", r.ID)
	row("owner", r.Owner)
	row("namespace", r.Namespace)
	row("key", r.Key)
	row("class", string(r.Class))
	row("state", string(r.State))
	row("authority", r.Authority.String())
	row("channel", r.Channel)
	row("writer", r.Writer)
	row("source", r.SourceRef)
	row("audience", r.Audience)
	row("created", r.CreatedAt.UTC().Format("2006-01-02T15:04:05Z"))
	if r.ExpiresAt != nil {
		row("expires", r.ExpiresAt.UTC().Format("2006-01-02T15:04:05Z"))
	}
	if len(r.Metadata) > 0 {
		kvs := make([]string, 0, len(r.Metadata))
		for _, k := range slices.Sorted(maps.Keys(r.Metadata)) {
			kvs = append(kvs, k+"="+r.Metadata[k])
		}
		row("metadata", strings.Join(kvs, ", "))
	}
	row("version", fmt.Sprint(r.Version))
	row("log index", fmt.Sprint(r.LogIndex))
	if len(r.Parents) > 0 {
		ps := make([]string, len(r.Parents))
		for i, p := range r.Parents {
			ps[i] = fmt.Sprintf("%s (weight %.2f)", p.ID, p.Weight)
		}
		row("parents", strings.Join(ps, ", "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\n%s\n", r.Body)
	return err
}
