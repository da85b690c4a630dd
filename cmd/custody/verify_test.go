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
// its back names the difference once and says what to do: reindex for an
// edge deleted, restore for a record rewritten.
func TestVerifyCommand(t *testing.T) {
	ctx := t.Context()
	sf := storeWithSummary(t)

	var out, errOut bytes.Buffer
	if err := runVerify(ctx, []string{"--db", sf.db}, &out, &errOut); err != nil || !strings.HasPrefix(out.String(), "ok: ") {
		t.Fatalf("verify of an untouched store = %v, printed %q", err, out.String())
	}
	behindItsBack(t, sf, `DELETE FROM edges`)
	out.Reset()
	err := runVerify(ctx, []string{"--db", sf.db}, &out, &errOut)
	if err == nil {
		t.Fatalf("verify after an edge was deleted passed: %q", out.String())
	}
	msg := err.Error()
	for _, want := range []string{"the store and its log disagree: record ", "lineage edges", "run custody reindex"} {
		if !strings.Contains(msg, want) {
			t.Errorf("verify error %q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, "verify:") {
		t.Errorf("verify error repeats the command's name: %q", msg)
	}
	// A record rewritten is not something a reindex mends.
	behindItsBack(t, sf, `UPDATE records SET body = 'rewritten' WHERE body = 'summary'`)
	err = runVerify(ctx, []string{"--db", sf.db}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "restore one taken before the change") || strings.Contains(err.Error(), "reindex") {
		t.Fatalf("verify after a record was rewritten = %v; want it to say to restore, not to reindex", err)
	}
}

// custody reindex rebuilds a deleted edge, which verify reports as a
// difference reindex mends, and verify passes again; over a rewritten
// record it rebuilds nothing and says to restore.
func TestReindexCommand(t *testing.T) {
	ctx := t.Context()
	sf := storeWithSummary(t)
	behindItsBack(t, sf, `DELETE FROM edges`)
	var out, errOut bytes.Buffer
	err := runVerify(ctx, []string{"--db", sf.db}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "run custody reindex") {
		t.Fatalf("verify after an edge was deleted = %v; want it to say to run custody reindex", err)
	}
	if err := runReindex(ctx, []string{"--db", sf.db}, &out, &errOut); err != nil || !strings.Contains(out.String(), "ok: rebuilt the indexes and lineage edges of 2 records") {
		t.Fatalf("reindex = %v, printed %q", err, out.String())
	}
	out.Reset()
	if err := runVerify(ctx, []string{"--db", sf.db}, &out, &errOut); err != nil || !strings.HasPrefix(out.String(), "ok: ") {
		t.Fatalf("verify after the reindex = %v, printed %q", err, out.String())
	}

	behindItsBack(t, sf, `UPDATE records SET body = 'rewritten' WHERE body = 'summary'`)
	out.Reset()
	err = runReindex(ctx, []string{"--db", sf.db}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "nothing was rebuilt") || !strings.Contains(err.Error(), "restore one taken before the change") {
		t.Fatalf("reindex over a rewritten record = %v, printed %q; want a refusal that says to restore", err, out.String())
	}
}

// storeWithSummary is a closed store in which alice holds a root episode
// and a summary derived from it.
func storeWithSummary(t *testing.T) storeFlags {
	t.Helper()
	ctx := t.Context()
	sf := storeFlags{db: filepath.Join(t.TempDir(), "c.db")}
	svc, st, err := sf.open(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
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
	return sf
}

// behindItsBack runs q on the closed store's database file.
func behindItsBack(t *testing.T, sf storeFlags, q string) {
	t.Helper()
	raw, err := sql.Open("sqlite", sf.db)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.ExecContext(t.Context(), q); err != nil {
		t.Fatal(err)
	}
}
