package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/client"
	"github.com/custody-mem/custody/httpapi"
	"github.com/custody-mem/custody/sqlite"
	"github.com/custody-mem/custody/tlog"
)

// TestImpactServer: custody impact, with a reviewer's token, prints the
// descendant, the session that read the memory and the gate decision that
// cited it; --json is the API's answer; a user's token is refused.
func TestImpactServer(t *testing.T) {
	ctx := context.Background()
	principal := cliServer(t)
	alice := principal("alice", []string{"user"})
	harness := principal("harness", []string{"agent"}, "agent", "tool:email", "derive")
	rita := principal("rita", []string{"reviewer"})
	h := client.New(os.Getenv("CUSTODY_URL"), harness)
	mail, err := h.Remember(ctx, httpapi.MemoryRequest{Subject: "alice", Namespace: "mail", Class: "episode", Body: "pay ACCT-31337", Channel: "tool:email"})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := h.Remember(ctx, httpapi.MemoryRequest{Subject: "alice", Namespace: "digest", Class: "episode", Body: "a payment request",
		Channel: "derive", DerivedFrom: []custody.Edge{{ID: mail.ID, Weight: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := h.OpenSession(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.GetIn(ctx, mail.ID, "alice", s.ID); err != nil {
		t.Fatal(err)
	}
	gd, err := h.Gate(ctx, httpapi.GateRequest{Action: "payments.send", Args: map[string]any{"to": "ACCT-31337"}, Justification: []string{mail.ID}, Subject: "alice", Session: s.ID})
	if err != nil {
		t.Fatal(err)
	}

	out := mustRun(t, rita, runImpact, mail.ID)
	for _, want := range []string{
		mail.ID + "  mail  episode  admitted  authority=external  channel=tool:email  owner=alice",
		"descendants: 1", sum.ID, "sessions that read it: 1", s.ID, "acme/harness", "get",
		"gate decisions that relied on it: 1", "payments.send", gd.Decision, "justification",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("impact printed\n%s\nwithout %q", out, want)
		}
	}
	var imp custody.Impact
	if err := json.Unmarshal([]byte(mustRun(t, rita, runImpact, "--json", mail.ID)), &imp); err != nil || len(imp.Sessions) != 1 || imp.Decisions[0].LogIndex != gd.LogIndex {
		t.Errorf("impact --json: %+v, %v", imp, err)
	}
	if _, _, err := run(t, alice, runImpact, mail.ID); err == nil || !strings.Contains(err.Error(), "reviewer") {
		t.Errorf("impact with a user's token: %v; want not found, naming the reviewer role", err)
	}
}

// TestImpactOffline: custody impact --db --tenant reads the store itself;
// without --tenant it is a usage error, and -h describes the verb.
func TestImpactOffline(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "c.db")
	st, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	key, _, err := tlog.LoadOrCreateServerKey(db + ".key")
	if err != nil {
		t.Fatal(err)
	}
	svc, err := custody.New(st, key, custody.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, _, err := svc.AddPrincipal(ctx, custody.PrincipalInput{Tenant: "acme", Name: "alice", Roles: []string{"user"}})
	if err != nil {
		t.Fatal(err)
	}
	c := &custody.Caller{Principal: p, Subject: p}
	d, err := svc.Remember(ctx, c, custody.Candidate{Namespace: "notes", Class: custody.ClassFact, Body: "the door code is 4711", Channel: "user"})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := svc.OpenSession(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.SearchIn(ctx, c, sess.ID, custody.SearchInput{Query: "door code"}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	code, out, msg := cli("impact", d.ID, "--db", db, "--tenant", "acme", "--json")
	var imp custody.Impact
	if code != 0 || json.Unmarshal([]byte(out), &imp) != nil || len(imp.Sessions) != 1 || imp.Sessions[0].Session != sess.ID || imp.Sessions[0].Via[0] != "search" {
		t.Fatalf("impact --db: %d %q %s", code, out, msg)
	}
	if code, _, msg := cli("impact", d.ID, "--db", db, "--tenant", "other"); code != 1 || !strings.Contains(msg, "not found") {
		t.Errorf("impact of another tenant's id: %d %s; want not found", code, msg)
	}
	if code, _, msg := cli("impact", d.ID, "--db", db); code != 2 || !strings.Contains(msg, "--tenant") {
		t.Errorf("impact --db without --tenant: %d %s; want a usage error", code, msg)
	}
	if code, _, msg := cli("impact", "-h"); code != 0 || !strings.Contains(msg, "Usage: custody impact ID") {
		t.Errorf("impact -h: %d %s", code, msg)
	}
}

// serve --read-retention must be positive; serve -h documents it with its
// default.
func TestServeReadRetentionFlag(t *testing.T) {
	for _, v := range []string{"0", "-1h"} {
		_, _, err := run(t, "", runServe, "--db", filepath.Join(t.TempDir(), "c.db"), "--read-retention", v)
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "--read-retention") {
			t.Errorf("serve --read-retention %s: %v; want a usage error naming the flag", v, err)
		}
	}
	if code, _, msg := cli("serve", "-h"); code != 0 || !strings.Contains(msg, "-read-retention") || !strings.Contains(msg, "720h0m0s") {
		t.Errorf("serve -h: %d, without --read-retention and its default:\n%s", code, msg)
	}
}
