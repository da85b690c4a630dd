package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// storeFiles lists the files of dir whose names start with prefix.
func storeFiles(t *testing.T, dir, prefix string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, prefix+"*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestRestoreNeedsTheSourceKey: a restore without the exporting server's
// key (none given, or another server's) fails before creating anything,
// with a message naming --key; a restore that fails after opening a new
// store (one refused the log name every installation would share) leaves
// no store files behind; with the source's key it restores, into a store
// whose log name is its own.
func TestRestoreNeedsTheSourceKey(t *testing.T) {
	dir := t.TempDir()
	src, other, dst := filepath.Join(dir, "a.db"), filepath.Join(dir, "c.db"), filepath.Join(dir, "b.db")
	var out, errOut bytes.Buffer
	ctx := context.Background()
	for _, db := range []string{src, other} {
		if err := runPrincipal(ctx, []string{"add", "--db", db, "--tenant", "acme", "--name", "alice", "--role", "user"}, &out, &errOut); err != nil {
			t.Fatalf("principal add: %v: %s", err, errOut.String())
		}
	}
	snap := filepath.Join(dir, "snap.json")
	if err := runExport(ctx, []string{"--db", src, "--tenant", "acme", "--out", snap}, &out, &errOut); err != nil {
		t.Fatalf("export: %v: %s", err, errOut.String())
	}

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no key", []string{"--db", dst, "--in", snap}, "--key"},
		{"another server's key", []string{"--db", dst, "--key", other + ".key", "--in", snap}, "--key"},
		{"the shared default log name", []string{"--db", dst, "--key", src + ".key", "--origin", "custody.local/log", "--in", snap}, "custody.local/log"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := runRestore(ctx, tc.args, &out, &errOut)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("restore %v: err = %v, want one naming %s", tc.args, err, tc.want)
			}
			if left := storeFiles(t, dir, "b.db"); len(left) > 0 {
				t.Fatalf("a failed restore left %v behind", left)
			}
		})
	}

	out.Reset()
	if err := runRestore(ctx, []string{"--db", dst, "--key", src + ".key", "--in", snap}, &out, &errOut); err != nil {
		t.Fatalf("restore with the source key: %v: %s", err, errOut.String())
	}
	if !strings.Contains(out.String(), "restored tenant acme: 1 principals") {
		t.Fatalf("restore printed %q", out.String())
	}
	if _, err := os.Stat(dst); err != nil {
		t.Fatalf("restored store: %v", err)
	}
}
