package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	custody "github.com/custody-mem/custody"
)

type multiFlag []string

func (m *multiFlag) String() string     { return fmt.Sprint(*m) }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func runPrincipal(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("principal add", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var sf storeFlags
	sf.register(fs)
	var tenant, name string
	var roles, channels, groups multiFlag
	fs.StringVar(&tenant, "tenant", "", "tenant `name` (created if new)")
	fs.StringVar(&name, "name", "", "principal `name`, unique in the tenant")
	fs.Var(&roles, "role", "`role`: user, agent, reviewer, policy_owner, admin or auditor (repeat for several)")
	fs.Var(&channels, "channel", "`channel` the principal may assert: user, agent, tool:<name>, import, derive, admin (repeat; default from the roles)")
	fs.Var(&groups, "group", "`group` the principal belongs to (repeat)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: custody principal add --tenant T --name N --role R [--channel C]... [--group G]... [--db FILE]\n\n"+
			"Creates a principal (and its tenant, if new) and prints its bearer token alone on stdout.\n"+
			"The token is shown once; only its hash is stored.\n"+
			"Also: custody principal list|show|update|rotate|revoke (each with -h).\n\n")
		fs.PrintDefaults()
	}
	if len(args) > 0 && adminVerbs[args[0]] {
		return runPrincipalAdmin(ctx, args[0], args[1:], stdout, stderr)
	}
	switch {
	case len(args) > 0 && isHelp(args[0]):
		fs.Usage()
		return flag.ErrHelp
	case len(args) == 0:
		fs.Usage()
		return usageError{"name a subcommand: add, list, show, update, rotate or revoke"}
	case args[0] != "add":
		return usageError{fmt.Sprintf("unknown subcommand %q; use add, list, show, update, rotate or revoke (custody principal add --tenant T --name N --role R)", args[0])}
	}
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if tenant == "" || name == "" || len(roles) == 0 {
		return usageError{"--tenant, --name and at least one --role are required"}
	}
	svc, st, err := sf.open(ctx, stderr)
	if err != nil {
		return err
	}
	defer st.Close()
	p, token, err := svc.AddPrincipal(ctx, custody.PrincipalInput{Tenant: tenant, Name: name, Roles: roles, Channels: channels, Groups: groups})
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, token)
	fmt.Fprintf(stderr, "custody: created %s with roles %v and channels %v\n", p.ID(), p.Roles, p.Channels)
	return nil
}

// isHelp reports whether arg asks for help.
func isHelp(arg string) bool {
	switch arg {
	case "-h", "-help", "--help", "help":
		return true
	}
	return false
}
