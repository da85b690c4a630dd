package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/httpapi"
)

// Exit codes of custody gate: 0 allow, 3 confirm, 4 deny.
const (
	exitGateConfirm = 3
	exitGateDeny    = 4
)

// exitError ends the command with a specific exit code after it printed
// its answer; main exits with ExitCode().
type exitError struct {
	code int
	msg  string
}

func (e exitError) Error() string { return e.msg }

// ExitCode is the process exit code.
func (e exitError) ExitCode() int { return e.code }

func runGate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	confirm := len(args) > 0 && args[0] == "confirm"
	if confirm {
		args = args[1:]
	}
	fs := flag.NewFlagSet("gate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cf := registerClientFlags(fs)
	var req httpapi.GateRequest
	var kvs, justify multiFlag
	fs.StringVar(&req.Action, "action", "", "the `action` to run, such as payments.send (required)")
	fs.Var(&kvs, "arg", "an argument `key=value` of the action; values are strings (repeat)")
	if !confirm {
		fs.Var(&justify, "justify", "`id` of a memory that justifies the action (repeat)")
		fs.StringVar(&req.Session, "session", "", "the session `id` whose observations the arguments may come from")
	}
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: custody gate --action A [--arg k=v]... [--justify ID]... [--session S] [flags]\n"+
			"       custody gate confirm --action A [--arg k=v]...    (the owner confirms that exact action once)\n\n"+
			"Asks the action gate whether the action may run on the strength of the memories and values\n"+
			"behind it, and prints the decision and its reasons.\n"+
			"Exit status: 0 allow, 3 confirm (the owner's confirmation would allow it), 4 deny.\n\n")
		fs.PrintDefaults()
	}
	rest, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q; arguments of the action go in --arg key=value", rest[0])}
	}
	if req.Action == "" {
		return usageError{"--action is required"}
	}
	req.Args = map[string]any{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return usageError{fmt.Sprintf("--arg %q must be key=value", kv)}
		}
		req.Args[k] = v
	}
	req.Justification = justify
	req.Subject = cf.subject
	c, err := cf.client()
	if err != nil {
		return err
	}
	if confirm {
		digest, err := c.ConfirmAction(ctx, httpapi.GateConfirmRequest{Action: req.Action, Args: req.Args, Subject: req.Subject})
		if err != nil {
			return err
		}
		if cf.json {
			return printJSON(stdout, httpapi.GateConfirmResponse{Digest: digest})
		}
		fmt.Fprintf(stdout, "confirmed %s once (digest %s)\n", req.Action, digest)
		return nil
	}
	d, err := c.Gate(ctx, req)
	if err != nil {
		return err
	}
	if cf.json {
		err = printJSON(stdout, d)
	} else {
		err = printGate(stdout, d)
	}
	if err != nil {
		return err
	}
	switch d.Decision {
	case custody.GateAllow:
		return nil
	case custody.GateConfirm:
		return exitError{exitGateConfirm, "the gate asks for the owner's confirmation (custody gate confirm ...)"}
	}
	return exitError{exitGateDeny, "the gate denied the action"}
}

func printGate(w io.Writer, d *custody.GateDecision) error {
	tw := table(w)
	fmt.Fprintf(tw, "decision\t%s\n", d.Decision)
	fmt.Fprintf(tw, "risk\t%s\n", d.Risk)
	fmt.Fprintf(tw, "required\t%s\n", d.Required)
	fmt.Fprintf(tw, "observed\t%s\n", d.Observed)
	if len(d.Offending) > 0 {
		fmt.Fprintf(tw, "offending\t%s\n", strings.Join(d.Offending, "; "))
	}
	if d.ConfirmDigest != "" {
		fmt.Fprintf(tw, "confirm digest\t%s\n", d.ConfirmDigest)
	}
	fmt.Fprintf(tw, "log index\t%d\n", d.LogIndex)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "reasons:")
	for _, r := range d.Reasons {
		fmt.Fprintf(w, "  - %s\n", r)
	}
	return nil
}
