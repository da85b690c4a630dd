package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	custody "github.com/custody-mem/custody"
)

func runLineage(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("lineage", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cf := registerClientFlags(fs)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: custody lineage ID [flags]\n\n"+
			"Prints a memory's ancestors (what it was derived from) and descendants (what was derived\n"+
			"from it) as trees, with each edge's weight and each record's state, authority and channel.\n\n")
		fs.PrintDefaults()
	}
	rest, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usageError{"give exactly one memory ID"}
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	l, err := c.Lineage(ctx, rest[0], cf.subject)
	if err != nil {
		return err
	}
	if cf.json {
		return printJSON(stdout, l)
	}
	return printLineage(stdout, l)
}

// printLineage draws the record, then its ancestors and descendants as
// trees following the order the server walked them.
func printLineage(w io.Writer, l *custody.Lineage) error {
	r := l.Record
	var b strings.Builder
	fmt.Fprintf(&b, "%s  %s  %s  %s  authority=%s  channel=%s\n", r.ID, nsKey(r), r.Class, r.State, r.Authority, r.Channel)
	for _, part := range []struct {
		title string
		nodes []custody.LineageNode
	}{{"ancestors (derived from)", l.Ancestors}, {"descendants (derived from it)", l.Descendants}} {
		if len(part.nodes) == 0 {
			fmt.Fprintf(&b, "%s: none\n", part.title)
			continue
		}
		fmt.Fprintf(&b, "%s:\n", part.title)
		kids := map[string][]custody.LineageNode{}
		for _, n := range part.nodes {
			kids[n.Via] = append(kids[n.Via], n)
		}
		var walk func(id, indent string)
		walk = func(id, indent string) {
			ns := kids[id]
			for i, n := range ns {
				branch, next := "├─ ", "│  "
				if i == len(ns)-1 {
					branch, next = "└─ ", "   "
				}
				fmt.Fprintf(&b, "%s%s%s\n", indent, branch, lineageNode(n))
				walk(n.ID, indent+next)
			}
		}
		walk(r.ID, "  ")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func lineageNode(n custody.LineageNode) string {
	if n.State == "hidden" {
		return fmt.Sprintf("%s  weight %.2f  (not visible to you)", n.ID, n.Weight)
	}
	where := n.Namespace
	if n.Key != "" {
		where += "/" + n.Key
	}
	return fmt.Sprintf("%s  %s  weight %.2f  %s  authority=%s  channel=%s", n.ID, where, n.Weight, n.State, n.Authority, n.Channel)
}
