package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/client"
	"github.com/custody-mem/custody/httpapi"
)

func runRemember(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("remember", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cf := registerClientFlags(fs)
	var req httpapi.MemoryRequest
	var parents, metadata multiFlag
	fs.StringVar(&req.Namespace, "namespace", "", "`namespace`: 1 to 8 segments joined by /, such as profile or work/projects (required)")
	fs.StringVar(&req.Key, "key", "", "`key` of a keyed record; an admitted write replaces the previous version")
	fs.StringVar(&req.Class, "class", "", "`class`: preference, fact, episode or procedure (required)")
	fs.StringVar(&req.Channel, "channel", custody.ChannelUser, "`channel` the content arrived on; must be one your token was registered with")
	fs.StringVar(&req.Audience, "audience", "", "`audience`: owner (default), group:<name> or tenant")
	fs.StringVar(&req.ExpiresAt, "expires", "", "expiry `time`, RFC 3339 (2030-01-02T15:04:05Z)")
	fs.StringVar(&req.Session, "session", "", "session `id` the write comes from")
	fs.StringVar(&req.SourceRef, "source-ref", "", "where the content came from (URL, message id, file) as `text`")
	fs.Var(&metadata, "metadata", "metadata `KEY=VALUE` kept with the record, plain data never a control field (repeat)")
	fs.Var(&parents, "derived-from", "parent `ID=WEIGHT` of a derived record, weight in [0,1] (repeat)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: custody remember --namespace NS --class C [flags] BODY...\n"+
			"       custody remember --namespace NS --class C [flags] -      (body from stdin)\n\n"+
			"Submits a memory to the server at $CUSTODY_URL with $CUSTODY_TOKEN and prints the decision:\n"+
			"admitted, or held (quarantined, pending_confirmation, pending) with the rules that decided.\n\n")
		fs.PrintDefaults()
	}
	rest, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if req.Namespace == "" || req.Class == "" {
		return usageError{"--namespace and --class are required"}
	}
	if len(rest) == 0 {
		return usageError{"give the memory's text as arguments, or - to read it from stdin"}
	}
	req.Body = strings.Join(rest, " ")
	if len(rest) == 1 && rest[0] == "-" {
		b, err := io.ReadAll(io.LimitReader(stdin, httpapi.DefaultMaxBodyBytes+1))
		if err != nil {
			return fmt.Errorf("reading the body from stdin: %w", err)
		}
		req.Body = strings.TrimRight(string(b), "\n")
	}
	for _, p := range parents {
		id, w, ok := strings.Cut(p, "=")
		weight, err := strconv.ParseFloat(w, 64)
		if !ok || err != nil || id == "" {
			return usageError{fmt.Sprintf("--derived-from %q must be ID=WEIGHT, such as 01J9Z...=0.5", p)}
		}
		req.DerivedFrom = append(req.DerivedFrom, custody.Edge{ID: id, Weight: weight})
	}
	if req.Metadata, err = metadataMap("metadata", metadata); err != nil {
		return err
	}
	req.Subject = cf.subject
	c, err := cf.client()
	if err != nil {
		return err
	}
	d, err := c.Remember(ctx, req)
	if err != nil {
		return err
	}
	if cf.json {
		return printJSON(stdout, d)
	}
	tw := table(stdout)
	fmt.Fprintf(tw, "id\t%s\n", d.ID)
	fmt.Fprintf(tw, "state\t%s\n", d.State)
	fmt.Fprintf(tw, "authority\t%s\n", d.Authority)
	fmt.Fprintf(tw, "reason\t%s\n", d.Reason)
	if d.Receipt != nil {
		fmt.Fprintf(tw, "rules\t%s\n", strings.Join(d.Receipt.Rules, ", "))
		fmt.Fprintf(tw, "policy\t%s\n", short(d.Receipt.PolicyVersion, 12))
	}
	fmt.Fprintf(tw, "log index\t%d\n", d.LogIndex)
	if err := tw.Flush(); err != nil {
		return err
	}
	switch d.State {
	case custody.StateQuarantined:
		fmt.Fprintf(stderr, "custody: held for review; a reviewer decides with 'custody review approve|reject %s'\n", d.ID)
	case custody.StatePendingConfirmation:
		fmt.Fprintf(stderr, "custody: waits for the owner's confirmation (POST /v1/memories/%s/confirm); the old value stays in force\n", d.ID)
	case custody.StatePending:
		fmt.Fprintf(stderr, "custody: the policy could not decide; the candidate waits as pending and is re-evaluated later\n")
	}
	return nil
}

// stdin is where "-" bodies are read from; tests replace it.
var stdin io.Reader = os.Stdin

// Helpers shared by the client verbs (remember, recall, search, review,
// lineage, gate).

// DefaultURL is the server the client verbs talk to unless CUSTODY_URL or
// --url says otherwise.
const DefaultURL = "http://127.0.0.1:8765"

// clientFlags are the flags every client verb has.
type clientFlags struct {
	url     string
	subject string
	json    bool
}

func registerClientFlags(fs *flag.FlagSet) *clientFlags {
	cf := &clientFlags{}
	def := os.Getenv("CUSTODY_URL")
	if def == "" {
		def = DefaultURL
	}
	fs.StringVar(&cf.url, "url", def, "server `URL` (default $CUSTODY_URL, else "+DefaultURL+")")
	fs.StringVar(&cf.subject, "subject", "", "`user` to act for; required when the token is an agent's")
	fs.BoolVar(&cf.json, "json", false, "print the server's JSON answer instead of a table")
	return cf
}

// client builds the API client. The token comes only from the environment,
// so it never shows in a process listing.
func (cf *clientFlags) client() (*client.Client, error) {
	token := strings.TrimSpace(os.Getenv("CUSTODY_TOKEN"))
	if token == "" {
		return nil, errors.New("CUSTODY_TOKEN is not set: get a token with\n" +
			"  custody principal add --tenant T --name N --role user\n" +
			"and run  export CUSTODY_TOKEN=<the printed token>")
	}
	return client.New(cf.url, token), nil
}

// parseInterleaved parses flags that may come before or after positional
// arguments ("custody recall ID --json"); "--" ends the flags.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var rest []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		left := fs.Args()
		if used := len(args) - len(left); used > 0 && args[used-1] == "--" {
			return append(rest, left...), nil
		}
		if len(left) == 0 {
			return rest, nil
		}
		rest = append(rest, left[0])
		args = left[1:]
	}
}

func table(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 4, 2, ' ', 0) }

func printJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// short cuts s to n runes with an ellipsis, on one line.
func short(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04")
}

func nsKey(r *custody.Record) string {
	if r.Key == "" {
		return r.Namespace
	}
	return r.Namespace + "/" + r.Key
}
