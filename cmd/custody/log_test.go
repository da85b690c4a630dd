package main

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/client"
	"github.com/custody-mem/custody/httpapi"
	"github.com/custody-mem/custody/sqlite"
	"github.com/custody-mem/custody/tlog"
	"golang.org/x/mod/sumdb/note"
)

// serveDir serves the SQLite store dir/c.db (key dir/c.db.key, as the
// store flags name them) at $CUSTODY_URL until stop.
func serveDir(t *testing.T, dir string) (svc *custody.Service, stop func()) {
	t.Helper()
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(dir, "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	key, _, err := tlog.LoadOrCreateServerKey(filepath.Join(dir, "c.db.key"))
	if err != nil {
		t.Fatal(err)
	}
	name, err := custody.ResolveLogName(ctx, store, "")
	if err != nil {
		t.Fatal(err)
	}
	if svc, err = custody.New(store, key, custody.Options{LogOrigin: name.Name}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(httpapi.New(svc, httpapi.Options{Logger: slog.New(slog.DiscardHandler)}).Handler())
	t.Setenv("CUSTODY_URL", srv.URL)
	return svc, func() { srv.Close(); store.Close() }
}

// custody log checkpoint --pin holds a server to the last checkpoint seen:
// an honest growing log passes and moves the pin (which verify takes as a
// checkpoint saved elsewhere); the same server on a rolled-back store
// fails, and the pin file is kept.
func TestLogCheckpointPin(t *testing.T) {
	dir, old := t.TempDir(), t.TempDir()
	pinFile := filepath.Join(t.TempDir(), "pin")
	svc, stop := serveDir(t, dir)
	vkey, err := svc.VerifierKey("acme")
	if err != nil {
		t.Fatal(err)
	}
	_, token, err := svc.AddPrincipal(t.Context(), custody.PrincipalInput{Tenant: "acme", Name: "alice", Roles: []string{"user"}})
	if err != nil {
		t.Fatal(err)
	}
	stop()
	copyFiles(t, dir, old, "c.db", "c.db-wal", "c.db-shm")

	svc, stop = serveDir(t, dir)
	defer func() { stop() }()
	if _, help, err := run(t, token, runLog, "-h"); !errors.Is(err, flag.ErrHelp) || !strings.Contains(help, "custody log checkpoint -h") {
		t.Errorf("log -h = %v, %q; want the subcommands", err, help)
	}
	if _, _, err := run(t, token, runLog, "checkpoint", "--pin", pinFile); err == nil || !strings.Contains(err.Error(), "--verifier") {
		t.Errorf("log checkpoint --pin without a verifier key = %v; want a usage error naming --verifier", err)
	}
	t.Setenv("CUSTODY_VERIFIER_KEY", vkey)
	note, _, err := run(t, token, runLog, "checkpoint")
	if err != nil || !strings.HasPrefix(note, svc.LogOrigin("acme")+"\n") {
		t.Fatalf("log checkpoint = %v, %q; want the signed note", err, note)
	}
	if out, _, err := run(t, token, runLog, "checkpoint", "--pin", pinFile); err != nil || !strings.HasPrefix(out, "ok: pinned the log (1 entries") {
		t.Fatalf("first pin = %v, %q", err, out)
	}
	if _, err := client.New(os.Getenv("CUSTODY_URL"), token).Remember(t.Context(), httpapi.MemoryRequest{Namespace: "n", Class: "fact", Body: "grows", Channel: "user"}); err != nil {
		t.Fatal(err)
	}
	if out, _, err := run(t, token, runLog, "checkpoint", "--pin", pinFile); err != nil || !strings.Contains(out, "extends the pinned checkpoint of 1 entries") {
		t.Fatalf("pin of the grown log = %v, %q", err, out)
	}
	if out, _, err := verifyOut(t, "--db", filepath.Join(dir, "c.db"), "--checkpoint", pinFile); err != nil || !strings.HasPrefix(out, "ok: ") {
		t.Fatalf("verify of the served store with the pin file = %v, %q", err, out)
	}
	pinned, err := os.ReadFile(pinFile)
	if err != nil {
		t.Fatal(err)
	}
	stop()

	copyFiles(t, old, dir, "c.db", "c.db-wal", "c.db-shm")
	_, stop = serveDir(t, dir)
	_, _, err = run(t, token, runLog, "checkpoint", "--pin", pinFile)
	if !errors.Is(err, client.ErrLogInconsistent) || !strings.Contains(err.Error(), "rolled back") || !strings.Contains(err.Error(), "custody verify --checkpoint "+pinFile) {
		t.Fatalf("pin of the rolled-back server = %v; want ErrLogInconsistent and what to do", err)
	}
	if now, err := os.ReadFile(pinFile); err != nil || string(now) != string(pinned) {
		t.Errorf("the pin file changed on an inconsistent log (%v)", err)
	}
}

// custody log key prints the same verifier key from a running server
// (without a token) and from the store's key file, and that key verifies
// the server's checkpoint; a store that does not exist is refused and not
// created.
func TestLogKey(t *testing.T) {
	dir := t.TempDir()
	svc, stop := serveDir(t, dir)
	defer stop()
	want, err := svc.VerifierKey("acme")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("CUSTODY_TOKEN", "")
	if _, _, err := run(t, "", runLog, "key"); err == nil || !strings.Contains(err.Error(), "--tenant") {
		t.Fatalf("log key without a tenant: %v; want a usage error naming --tenant", err)
	}
	fromServer, _, err := run(t, "", runLog, "key", "--tenant", "acme")
	if err != nil || strings.TrimSpace(fromServer) != want {
		t.Fatalf("log key from the server = %q, %v; want %q", fromServer, err, want)
	}
	fromStore, _, err := run(t, "", runLog, "key", "--tenant", "acme", "--db", filepath.Join(dir, "c.db"))
	if err != nil || strings.TrimSpace(fromStore) != want {
		t.Fatalf("log key --db = %q, %v; want %q", fromStore, err, want)
	}
	cp, err := svc.Checkpoint(t.Context(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	v, err := note.NewVerifier(strings.TrimSpace(fromServer))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := note.Open(cp, note.VerifierList(v)); err != nil {
		t.Fatalf("the printed key does not verify the checkpoint: %v", err)
	}
	missing := filepath.Join(t.TempDir(), "none.db")
	if _, _, err := run(t, "", runLog, "key", "--tenant", "acme", "--db", missing); err == nil || !strings.Contains(err.Error(), "no store") {
		t.Fatalf("log key on a missing store: %v; want a refusal", err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("log key created %s", missing)
	}
}
