package main

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
)

// TestPrincipalHelp: "custody principal -h" prints the usage of principal
// add (exit 0), not a pointer back to itself; a missing or unknown
// subcommand is a usage error (exit 2) whose hint leads to that usage.
func TestPrincipalHelp(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		code     int
		contains string
	}{
		{[]string{"principal", "-h"}, 0, "Usage: custody principal add --tenant T"},
		{[]string{"principal", "--help"}, 0, "-role role"},
		{[]string{"principal", "add", "-h"}, 0, "Usage: custody principal add --tenant T"},
		{[]string{"principal"}, 2, "Usage: custody principal add --tenant T"},
		{[]string{"principal", "remove"}, 2, `unknown subcommand "remove"`},
	} {
		var out, errOut bytes.Buffer
		code := execute(context.Background(), tc.args, &out, &errOut)
		if code != tc.code || !strings.Contains(errOut.String(), tc.contains) {
			t.Errorf("custody %v: exit %d, stderr %q; want exit %d and %q", tc.args, code, errOut.String(), tc.code, tc.contains)
		}
		if code == 0 && strings.Contains(errOut.String(), "Run 'custody principal -h'") {
			t.Errorf("custody %v sends the reader back to itself: %s", tc.args, errOut.String())
		}
	}
}

// TestConnectionRefusedSaysStartServe: a client verb that finds no server
// says to start custody serve or set CUSTODY_URL; an error from a running
// server gets no such hint.
func TestConnectionRefusedSaysStartServe(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there any more: connections are refused
	t.Setenv("CUSTODY_TOKEN", "some-token")
	var out, errOut bytes.Buffer
	code := execute(context.Background(), []string{"search", "--url", dead, "payee"}, &out, &errOut)
	msg := errOut.String()
	if code != 1 || !strings.Contains(msg, "custody serve") || !strings.Contains(msg, "CUSTODY_URL") || !strings.Contains(msg, dead) {
		t.Fatalf("exit %d, stderr %q; want exit 1 naming %s, custody serve and CUSTODY_URL", code, msg, dead)
	}

	cliServer(t) // a running server; the token is unknown to it
	t.Setenv("CUSTODY_TOKEN", "unknown-token")
	errOut.Reset()
	if code := execute(context.Background(), []string{"search", "payee"}, &out, &errOut); code != 1 || strings.Contains(errOut.String(), "custody serve") {
		t.Fatalf("a refusal by a running server: exit %d, stderr %q; want exit 1 without the start hint", code, errOut.String())
	}
}
