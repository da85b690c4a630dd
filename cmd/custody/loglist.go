package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/custody-mem/custody/httpapi"
)

// DefaultQPD is the qpd of each log in custody log list: one
// add-checkpoint request every 10 s, serve's --checkpoint-interval.
const DefaultQPD = 8640

// listedLog is one tenant's log in custody log list --json.
type listedLog struct {
	Tenant string `json:"tenant"`
	Origin string `json:"origin"`
	VKey   string `json:"vkey"`
	URL    string `json:"url"`
}

// runLogList prints every tenant's log of a store: its origin, verifier
// key and URL, as a C2SP tlog-list for witnesses and monitors.
func runLogList(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("log list", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var sf storeFlags
	sf.register(fs)
	existingStore(fs)
	base := os.Getenv("CUSTODY_URL")
	if base == "" {
		base = DefaultURL
	}
	url := fs.String("url", base, "the `URL` the server is reached at from outside, to which each log's path is appended (default $CUSTODY_URL, else "+DefaultURL+")")
	tenant := fs.String("tenant", "", "list only this `tenant`'s log (what to hand its security team)")
	qpd := fs.Int("qpd", DefaultQPD, "the add-checkpoint `requests` per day each log may send a witness, for the list's qpd lines")
	contact := fs.String("contact", "", "how witness operators reach you, for the list's contact lines (default: the log name)")
	asJSON := fs.Bool("json", false, "print a JSON array of {tenant, origin, vkey, url} instead")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: custody log list [--db FILE | --postgres DSN] [--url URL] [--tenant T] [--qpd N] [--contact TEXT] [--json]\n\n"+
			"Prints every tenant's log of the store as a C2SP tlog-list (logs/v0): each log's verifier\n"+
			"key (whose name is the log's origin), qpd and contact, with the tenant and the URL of its\n"+
			"C2SP tlog-tiles in a comment above it. Hand it to the witnesses that cosign the logs (so a\n"+
			"new tenant does not mean configuring each witness by hand) and to the monitors that follow\n"+
			"them (custody log monitor --url URL --verifier KEY). Each log is published under an ID that\n"+
			"cannot be guessed from the tenant's name: whoever has a log's URL can follow it, so hand a\n"+
			"tenant's URL only to those who may know the tenant (--tenant prints one).\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	if *qpd < 1 || *qpd >= 1<<31 {
		return usageError{fmt.Sprintf("--qpd %d must be at least 1 and below 2^31 (C2SP tlog-list)", *qpd)}
	}
	if !strings.HasPrefix(*url, "http://") && !strings.HasPrefix(*url, "https://") {
		return usageError{fmt.Sprintf("--url %q must be the http(s) URL the server is reached at", *url)}
	}
	if err := requireStore(sf); err != nil {
		return err
	}
	svc, st, err := sf.open(ctx, stderr)
	if err != nil {
		return err
	}
	defer st.Close()
	tenants, err := st.LogTenants(ctx)
	if err != nil {
		return err
	}
	if *tenant != "" {
		found := false
		for _, t := range tenants {
			found = found || t == *tenant
		}
		if !found {
			return fmt.Errorf("the store has no log of tenant %q: a tenant has a log from its first principal on (custody principal add)", *tenant)
		}
		tenants = []string{*tenant}
	}
	ids := svc.LogIDs()
	logs := make([]listedLog, 0, len(tenants))
	for _, t := range tenants {
		vkey, err := svc.VerifierKey(t)
		if err != nil {
			return err
		}
		logs = append(logs, listedLog{Tenant: t, Origin: svc.LogOrigin(t), VKey: vkey,
			URL: strings.TrimSuffix(*url, "/") + httpapi.TilesPrefix + ids.ID(t)})
	}
	if *asJSON {
		return printJSON(stdout, logs)
	}
	who := *contact
	if who == "" {
		who = svc.LogName()
	}
	fmt.Fprintf(stdout, "#\n# The logs of %s, one per tenant (custody log list).\n# Generated: %s\n#\nlogs/v0\n",
		svc.LogName(), time.Now().UTC().Format("2006-01-02 15:04:05 UTC"))
	for _, l := range logs {
		fmt.Fprintf(stdout, "\n# tenant %s: %s\nvkey %s\nqpd %d\ncontact %s\n", l.Tenant, l.URL, l.VKey, *qpd, who)
	}
	return nil
}
