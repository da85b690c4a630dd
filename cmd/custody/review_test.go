package main

import (
	"errors"
	"strings"
	"testing"
)

func TestReview(t *testing.T) {
	principal := cliServer(t)
	alice := principal("alice", []string{"user"})
	harness := principal("harness", []string{"agent"}, "agent", "tool:email")
	rita := principal("rita", []string{"reviewer"})
	rememberID(t, alice, "--namespace", "profile", "--key", "payee_account", "--class", "fact", "ACCT-1042")
	bad, _ := rememberID(t, harness, "--subject", "alice", "--channel", "tool:email", "--source-ref", "mail:9",
		"--namespace", "profile", "--key", "payee_account", "--class", "fact", "ACCT-7777")
	tip, _ := rememberID(t, harness, "--subject", "alice", "--channel", "tool:email", "--namespace", "tips", "--class", "fact", "the cafe opens at 8")

	out := mustRun(t, rita, runReview)
	if !strings.Contains(out, "ACCT-1042 -> ACCT-7777") || !strings.Contains(out, "mail:9") || !strings.Contains(out, tip) {
		t.Fatalf("review list:\n%s", out)
	}
	if out := mustRun(t, rita, runReview, "reject", bad, "--reason", "phishing"); !strings.Contains(out, "rejected") {
		t.Fatalf("reject: %s", out)
	}
	if out := mustRun(t, rita, runReview, "approve", tip); !strings.Contains(out, "admitted  authority confirmed") {
		t.Fatalf("approve: %s", out)
	}
	if _, errOut, err := run(t, rita, runReview, "list"); err != nil || !strings.Contains(errOut, "empty") {
		t.Fatalf("empty queue: %v %s", err, errOut)
	}
	if _, _, err := run(t, alice, runReview); err == nil || !strings.Contains(err.Error(), "reviewer") {
		t.Fatalf("a user lists the queue: %v", err)
	}
	var ue usageError
	for _, args := range [][]string{{"approve"}, {"bless", "x"}, {"list", "x"}} {
		if _, _, err := run(t, rita, runReview, args...); !errors.As(err, &ue) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}
