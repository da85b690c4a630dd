package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/client"
	"github.com/custody-mem/custody/httpapi"
)

// adminVerbs are the principal subcommands beyond add.
var adminVerbs = map[string]bool{"list": true, "show": true, "update": true, "rotate": true, "revoke": true}

// cliOperator names who acts in the log entries of a change made on the
// store itself.
const cliOperator = "operator (custody principal on the store)"

// principalOps is what the admin subcommands need, from the store itself
// or from a running server.
type principalOps struct {
	list   func(ctx context.Context) ([]custody.PrincipalInfo, error)
	show   func(ctx context.Context, name string) (custody.PrincipalInfo, error)
	update func(ctx context.Context, name string, ch custody.PrincipalChange) (custody.PrincipalInfo, error)
	rotate func(ctx context.Context, name, reason string) (custody.PrincipalInfo, string, error)
	revoke func(ctx context.Context, name, reason string) (custody.PrincipalInfo, error)
}

func storeOps(svc *custody.Service, a custody.PrincipalAdmin) principalOps {
	return principalOps{
		list: func(ctx context.Context) ([]custody.PrincipalInfo, error) { return svc.ListPrincipals(ctx, a) },
		show: func(ctx context.Context, name string) (custody.PrincipalInfo, error) {
			return svc.ShowPrincipal(ctx, a, name)
		},
		update: func(ctx context.Context, name string, ch custody.PrincipalChange) (custody.PrincipalInfo, error) {
			return svc.UpdatePrincipal(ctx, a, name, ch)
		},
		rotate: func(ctx context.Context, name, reason string) (custody.PrincipalInfo, string, error) {
			return svc.RotatePrincipal(ctx, a, name, reason)
		},
		revoke: func(ctx context.Context, name, reason string) (custody.PrincipalInfo, error) {
			return svc.RevokePrincipal(ctx, a, name, reason)
		},
	}
}

func serverOps(c *client.Client) principalOps {
	val := func(p *custody.PrincipalInfo, err error) (custody.PrincipalInfo, error) {
		if err != nil {
			return custody.PrincipalInfo{}, err
		}
		return *p, nil
	}
	return principalOps{
		list: c.Principals,
		show: func(ctx context.Context, name string) (custody.PrincipalInfo, error) {
			return val(c.Principal(ctx, name))
		},
		update: func(ctx context.Context, name string, ch custody.PrincipalChange) (custody.PrincipalInfo, error) {
			req := httpapi.PrincipalUpdateRequest{Roles: ch.Roles, Channels: ch.Channels, Reason: ch.Reason}
			if ch.SetGroups || ch.Groups != nil {
				g := append([]string{}, ch.Groups...)
				req.Groups = &g
			}
			return val(c.UpdatePrincipal(ctx, name, req))
		},
		rotate: func(ctx context.Context, name, reason string) (custody.PrincipalInfo, string, error) {
			r, err := c.RotatePrincipal(ctx, name, reason)
			if err != nil {
				return custody.PrincipalInfo{}, "", err
			}
			return r.Principal, r.Token, nil
		},
		revoke: func(ctx context.Context, name, reason string) (custody.PrincipalInfo, error) {
			return val(c.RevokePrincipal(ctx, name, reason))
		},
	}
}

func runPrincipalAdmin(ctx context.Context, sub string, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("principal "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var sf storeFlags
	sf.register(fs)
	cf := registerClientFlags(fs)
	var tenant, reason string
	var roles, channels, groups multiFlag
	var noGroups bool
	fs.StringVar(&tenant, "tenant", "", "with --db or --postgres: the `tenant` (a server uses the admin token's own)")
	if sub == "update" || sub == "rotate" || sub == "revoke" {
		fs.StringVar(&reason, "reason", "", "why, kept in the log entry (`text`)")
	}
	if sub == "update" {
		fs.Var(&roles, "role", "new `role` (repeat; replaces the roles)")
		fs.Var(&channels, "channel", "new `channel` (repeat; replaces the channels)")
		fs.Var(&groups, "group", "new `group` (repeat; replaces the groups)")
		fs.BoolVar(&noGroups, "no-groups", false, "remove every group")
	}
	what := map[string]string{
		"list":   "list                 the tenant's principals: roles, channels, groups, status (no token material)",
		"show":   "show NAME            one principal",
		"update": "update NAME [--role R]... [--channel C]... [--group G]... [--no-groups]\n                       replace its roles, channels or groups; each given list replaces the old one",
		"rotate": "rotate NAME          print a new token alone on stdout, once; the old token is refused from now on",
		"revoke": "revoke NAME          revoke it for good: its token is refused on every route and nobody acts for it;\n                       its records stay, with their writer",
	}[sub]
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: custody principal %s\n\n"+
			"On the store itself with --db FILE or --postgres DSN (and --tenant T), or on the running server\n"+
			"at $CUSTODY_URL with an admin's $CUSTODY_TOKEN. Every change is a signed log entry.\n\n", what)
		fs.PrintDefaults()
	}
	rest, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	switch {
	case sub == "list" && len(rest) > 0:
		return usageError{"principal list takes no arguments"}
	case sub != "list" && len(rest) != 1:
		return usageError{fmt.Sprintf("principal %s needs exactly one principal name", sub)}
	}
	offline, err := storeOrServer(fs)
	if err != nil {
		return err
	}
	switch {
	case offline && tenant == "":
		return usageError{"with --db or --postgres, --tenant names the tenant"}
	case !offline && tenant != "":
		return usageError{"--tenant is for --db or --postgres; a server uses the tenant of $CUSTODY_TOKEN"}
	}
	var ops principalOps
	if offline {
		svc, st, err := sf.open(ctx, stderr)
		if err != nil {
			return err
		}
		defer st.Close()
		ops = storeOps(svc, custody.PrincipalAdmin{Tenant: tenant, By: cliOperator})
	} else {
		c, err := cf.client()
		if err != nil {
			return err
		}
		ops = serverOps(c)
	}
	var info custody.PrincipalInfo
	switch sub {
	case "list":
		ps, err := ops.list(ctx)
		if err != nil {
			return err
		}
		if cf.json {
			return printJSON(stdout, ps)
		}
		return printPrincipals(stdout, ps)
	case "show":
		info, err = ops.show(ctx, rest[0])
	case "update":
		ch := custody.PrincipalChange{Reason: reason, SetGroups: noGroups}
		if len(roles) > 0 {
			ch.Roles = roles
		}
		if len(channels) > 0 {
			ch.Channels = channels
		}
		if len(groups) > 0 {
			if noGroups {
				return usageError{"give --group or --no-groups, not both"}
			}
			ch.Groups = groups
		}
		info, err = ops.update(ctx, rest[0], ch)
	case "rotate":
		var token string
		if info, token, err = ops.rotate(ctx, rest[0], reason); err != nil {
			return err
		}
		if cf.json {
			return printJSON(stdout, httpapi.RotateResponse{Principal: info, Token: token})
		}
		fmt.Fprintln(stdout, token)
		fmt.Fprintf(stderr, "custody: %s/%s has a new token (shown once); the old one is refused from now on\n", info.Tenant, info.Name)
		return nil
	case "revoke":
		info, err = ops.revoke(ctx, rest[0], reason)
	}
	if err != nil {
		return err
	}
	if cf.json {
		return printJSON(stdout, info)
	}
	return printPrincipals(stdout, []custody.PrincipalInfo{info})
}

func printPrincipals(w io.Writer, ps []custody.PrincipalInfo) error {
	tw := table(w)
	fmt.Fprintln(tw, "NAME\tROLES\tCHANNELS\tGROUPS\tSTATUS\tCREATED\tLOG ENTRY")
	for _, p := range ps {
		status := p.Status
		if p.Problem != "" {
			status += " (" + p.Problem + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\n", p.Name, list(p.Roles), list(p.Channels), list(p.Groups), status,
			p.CreatedAt.Format("2006-01-02 15:04"), p.LogIndex)
	}
	return tw.Flush()
}

func list(s []string) string {
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, ",")
}
