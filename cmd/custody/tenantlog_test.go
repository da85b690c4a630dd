package main

import (
	"bufio"
	"context"
	"database/sql"
	"io"
	"path/filepath"
	"strings"
	"testing"
)

// serveBanner runs custody serve on db with args until it has printed its
// banner through the verifier key line, and returns the banner; the
// server stops with the test. It returns serve's error if serve stopped
// before.
func serveBanner(t *testing.T, db string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := runServe(ctx, append([]string{"--db", db, "--addr", "127.0.0.1:0"}, args...), io.Discard, pw)
		pw.Close()
		done <- err
	}()
	var b strings.Builder
	sc := bufio.NewScanner(pr)
	logName := false
	for sc.Scan() {
		line := sc.Text()
		b.WriteString(line + "\n")
		logName = logName || strings.HasPrefix(line, "Log name ")
		if logName && strings.HasPrefix(line, "  ") && strings.Contains(line, "+") {
			go io.Copy(io.Discard, pr)
			t.Cleanup(func() {
				cancel()
				if err := <-done; err != nil {
					t.Errorf("serve: %v", err)
				}
			})
			return b.String(), nil
		}
	}
	cancel()
	return b.String(), <-done
}

// custody serve refuses to create a store with the log name every
// installation would share; without --origin it makes a unique one, prints
// it and keeps it; an explicit name of one's own works, and a store keeps
// the name it has.
func TestServeLogName(t *testing.T) {
	dir := t.TempDir()
	shared := filepath.Join(dir, "shared.db")
	if _, err := serveBanner(t, shared, "--origin", "custody.local/log"); err == nil || !strings.Contains(err.Error(), "custody.local/log") || !strings.Contains(err.Error(), "--origin") {
		t.Fatalf("serve of a new store named custody.local/log: %v; want a refusal naming it and --origin", err)
	}

	made := filepath.Join(dir, "made.db")
	banner, err := serveBanner(t, made)
	if err != nil {
		t.Fatal(err)
	}
	name := between(banner, "Log name ", ":")
	if !strings.HasPrefix(name, "custody.local/i-") || !strings.Contains(banner, "  "+name+"/acme+") {
		t.Fatalf("serve of a new store printed the log name %q and banner:\n%s\nwant a unique name and acme's key under it", name, banner)
	}
	if n := strings.Count(banner, "the store's log name is"); n != 0 {
		t.Fatalf("serve's banner names the new log twice (its own block and the store's opening):\n%s", banner)
	}
	if again, _, err := run(t, "", runLog, "key", "--tenant", "acme", "--db", made); err != nil || !strings.HasPrefix(again, name+"/acme+") {
		t.Fatalf("the store's log name afterwards: %q, %v; want %s kept", again, err, name)
	}
	if _, _, err := run(t, "", runLog, "key", "--tenant", "acme", "--db", made, "--origin", "example.com/other"); err == nil || !strings.Contains(err.Error(), name) {
		t.Fatalf("another --origin on a named store: %v; want a refusal naming %s", err, name)
	}

	own := filepath.Join(dir, "own.db")
	banner, err = serveBanner(t, own, "--origin", "example.com/custody")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(banner, "Log name example.com/custody:") || !strings.Contains(banner, "  example.com/custody/acme+") {
		t.Fatalf("serve --origin example.com/custody printed:\n%s", banner)
	}
}

func between(s, from, to string) string {
	_, after, _ := strings.Cut(s, from)
	v, _, _ := strings.Cut(after, to)
	return v
}

// custody verify reports each tenant's log on its own: both pass on an
// honest store; with a leaf of beta's log rewritten, beta's log is
// reported as differing and acme's as verified.
func TestVerifyReportsEachTenant(t *testing.T) {
	db := filepath.Join(t.TempDir(), "c.db")
	for _, tenant := range []string{"acme", "beta"} {
		for _, name := range []string{"alice", "bob"} {
			mustRun(t, "", runPrincipal, "add", "--db", db, "--tenant", tenant, "--name", name, "--role", "user")
		}
	}
	out := mustRun(t, "", runVerify, "--db", db)
	for _, want := range []string{"in 2 tenants' logs", "  acme: ok (", "/acme): 2 entries", "  beta: ok ("} {
		if !strings.Contains(out, want) {
			t.Fatalf("verify of an honest store printed:\n%s\nwant %q", out, want)
		}
	}
	raw, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`UPDATE log_leaves SET data = (SELECT data FROM log_leaves WHERE tenant = 'beta' AND idx = 0) WHERE tenant = 'beta' AND idx = 1`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	out, _, err = run(t, "", runVerify, "--db", db)
	if err == nil || !strings.Contains(err.Error(), "beta's log") {
		t.Fatalf("verify with beta's log rewritten: %v; want a difference in beta's log", err)
	}
	if !strings.Contains(out, "  beta: DIFFERS (") || !strings.Contains(out, "  acme: ok (") {
		t.Fatalf("verify with beta's log rewritten printed:\n%s\nwant beta differing and acme verified", out)
	}
}
