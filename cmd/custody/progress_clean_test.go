package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The long verbs report progress only to a terminal: run on files and
// buffers (a script, a pipe, a log), verify, export, restore, reindex and
// import write their usual lines and no carriage return or escape
// sequence, on stdout or stderr.
func TestLongVerbsCleanOffTerminal(t *testing.T) {
	dir := t.TempDir()
	db, snap, dst := filepath.Join(dir, "c.db"), filepath.Join(dir, "snap.json"), filepath.Join(dir, "d.db")
	mustRun(t, "", runPrincipal, "add", "--db", db, "--tenant", "acme", "--name", "alice", "--role", "user")
	for _, step := range []struct {
		name string
		verb func(*testing.T) (string, string, error)
		want string // in stdout or stderr
	}{
		{"import", func(t *testing.T) (string, string, error) {
			return run(t, "", runImport, "--db", db, "--tenant", "acme", "--principal", "alice", "--in", writeJSONL(t, 2500))
		}, "imported 2500 candidates"},
		{"verify", func(t *testing.T) (string, string, error) { return run(t, "", runVerify, "--db", db) }, "ok: "},
		{"export", func(t *testing.T) (string, string, error) {
			return run(t, "", runExport, "--db", db, "--tenant", "acme", "--out", snap)
		}, "exported 2500 records"},
		{"restore", func(t *testing.T) (string, string, error) {
			return run(t, "", runRestore, "--db", dst, "--key", db+".key", "--in", snap)
		}, "2500"},
		{"reindex", func(t *testing.T) (string, string, error) { return run(t, "", runReindex, "--db", db) }, "ok: rebuilt"},
	} {
		out, errOut, err := step.verb(t)
		if err != nil {
			t.Fatalf("%s: %v\nstdout: %s\nstderr: %s", step.name, err, out, errOut)
		}
		if !strings.Contains(out+errOut, step.want) {
			t.Errorf("%s printed %q and %q; want %q in them", step.name, out, errOut, step.want)
		}
		if strings.ContainsAny(out+errOut, "\r\x1b") {
			t.Errorf("%s wrote terminal control characters off a terminal: %q %q", step.name, out, errOut)
		}
	}
}

// On a terminal, a progress line is drawn in place and cleared at the end.
func TestProgressDrawsOnTerminal(t *testing.T) {
	var buf bytes.Buffer
	p := &progress{w: &buf, label: "exporting records", start: time.Now().Add(-10 * time.Second), on: true}
	p.update(250, 1000)
	p.update(260, 1000) // within progressEvery of the last: not drawn
	p.done()
	got := buf.String()
	if !strings.HasPrefix(got, "\r\033[Kexporting records [######..................] 250/1000  25%  about ") || !strings.HasSuffix(got, " left\r\033[K") {
		t.Errorf("drew %q", got)
	}
	if strings.Count(got, "\r") != 2 {
		t.Errorf("drew %d lines for two updates within %v and the end: %q", strings.Count(got, "\r"), progressEvery, got)
	}
}
