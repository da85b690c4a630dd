package main

import (
	"bytes"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	custody "github.com/custody-mem/custody"
)

// custody verify says ok on an untouched store, and on one edited behind
// its back names the difference once and says what to do.
func TestVerifyCommand(t *testing.T) {
	ctx := t.Context()
	sf := storeFlags{db: filepath.Join(t.TempDir(), "c.db"), origin: custody.DefaultLogOrigin}
	svc, st, err := sf.open(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, _, err := svc.AddPrincipal(ctx, custody.PrincipalInput{Tenant: "acme", Name: "alice", Roles: []string{"user"}})
	if err != nil {
		t.Fatal(err)
	}
	alice := &custody.Caller{Principal: p, Subject: p}
	root, err := svc.Remember(ctx, alice, custody.Candidate{Namespace: "n", Class: custody.ClassEpisode, Body: "root", Channel: "user"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Remember(ctx, alice, custody.Candidate{Namespace: "n", Class: custody.ClassEpisode, Body: "summary", Channel: "user",
		DerivedFrom: []custody.Edge{{ID: root.ID, Weight: 1}}}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	var out, errOut bytes.Buffer
	if err := runVerify(ctx, []string{"--db", sf.db}, &out, &errOut); err != nil || !strings.HasPrefix(out.String(), "ok: ") {
		t.Fatalf("verify of an untouched store = %v, printed %q", err, out.String())
	}
	raw, err := sql.Open("sqlite", sf.db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.ExecContext(ctx, `DELETE FROM edges`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	out.Reset()
	err = runVerify(ctx, []string{"--db", sf.db}, &out, &errOut)
	if err == nil {
		t.Fatalf("verify after an edge was deleted passed: %q", out.String())
	}
	msg := err.Error()
	for _, want := range []string{"the store and its log disagree: record ", "lineage edges", "restore one taken before the change"} {
		if !strings.Contains(msg, want) {
			t.Errorf("verify error %q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, "verify:") {
		t.Errorf("verify error repeats the command's name: %q", msg)
	}
}
