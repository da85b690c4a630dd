package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/custody-mem/custody/httpapi"
)

func runSearch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("search", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cf := registerClientFlags(fs)
	var req httpapi.SearchRequest
	fs.StringVar(&req.Namespace, "namespace", "", "only this `namespace`")
	fs.StringVar(&req.NamespacePrefix, "namespace-prefix", "", "only this `namespace` and those below it (work: work, work/notes; not workshop); not with --namespace")
	fs.StringVar(&req.Class, "class", "", "only this `class`: preference, fact, episode or procedure")
	var ff filterFlags
	ff.register(fs)
	fs.IntVar(&req.Limit, "limit", 0, "at most `n` results (server default 10, at most 100)")
	fs.StringVar(&req.Mode, "mode", "", "`mode`: lexical (words), semantic (meaning) or hybrid (both); default hybrid when the server has an embedder, else lexical")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: custody search [--namespace NS | --namespace-prefix NS] [--class C] [--key-prefix P]\n"+
			"                     [--created-after T] [--created-before T] [--metadata K=V]... [--limit N] [--mode M] [flags] QUERY...\n\n"+
			"Ranks the eligible memories against plain text (words are terms; no query language)\n"+
			"and prints them best first, with their provenance.\n\n")
		fs.PrintDefaults()
	}
	rest, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	req.Query = strings.Join(rest, " ")
	if strings.TrimSpace(req.Query) == "" {
		return usageError{"give the words to search for"}
	}
	req.KeyPrefix, req.CreatedAfter, req.CreatedBefore = ff.keyPrefix, ff.after, ff.before
	if req.Metadata, err = metadataMap("metadata", ff.metadata); err != nil {
		return err
	}
	req.Subject = cf.subject
	c, err := cf.client()
	if err != nil {
		return err
	}
	res, err := c.Search(ctx, req)
	if err != nil {
		return err
	}
	if cf.json {
		return printJSON(stdout, res)
	}
	if res.Fallback != "" {
		fmt.Fprintf(stderr, "custody: %s search: %s\n", res.Mode, res.Fallback)
	}
	if len(res.Items) == 0 {
		fmt.Fprintln(stderr, "custody: no eligible memory matches")
		return nil
	}
	tw := table(stdout)
	fmt.Fprintln(tw, "SCORE\tLISTS\tID\tNAMESPACE/KEY\tCLASS\tAUTHORITY\tCHANNEL\tBODY")
	for _, h := range res.Items {
		fmt.Fprintf(tw, "%.3g\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", h.Score, strings.Join(h.Lists, ","), h.ID, nsKey(h.Record), h.Class, h.Authority, h.Channel, short(h.Body, 60))
	}
	return tw.Flush()
}
