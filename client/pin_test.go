package client_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custody-mem/custody"
	"github.com/custody-mem/custody/client"
	"github.com/custody-mem/custody/httpapi"
	"github.com/custody-mem/custody/sqlite"
	"github.com/custody-mem/custody/tlog"
	"golang.org/x/mod/sumdb/note"
)

// storeServer serves the SQLite store in dir (created if new) until stop.
func storeServer(t *testing.T, dir string) (url string, svc *custody.Service, stop func()) {
	t.Helper()
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(dir, "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	key, _, err := tlog.LoadOrCreateServerKey(filepath.Join(dir, "server.key"))
	if err != nil {
		t.Fatal(err)
	}
	svc, err = custody.New(store, key, custody.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(httpapi.New(svc, httpapi.Options{Logger: slog.New(slog.DiscardHandler)}).Handler())
	return srv.URL, svc, func() { srv.Close(); store.Close() }
}

// copyStore copies the closed store's files from one directory to another.
func copyStore(t *testing.T, from, to string) {
	t.Helper()
	for _, suffix := range []string{"", "-wal", "-shm"} {
		b, err := os.ReadFile(filepath.Join(from, "c.db"+suffix))
		if errors.Is(err, os.ErrNotExist) {
			os.Remove(filepath.Join(to, "c.db"+suffix))
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, "c.db"+suffix), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func remember(t *testing.T, c *client.Client, n int, what string) {
	t.Helper()
	for i := range n {
		if _, err := c.Remember(t.Context(), httpapi.MemoryRequest{Namespace: "notes", Class: "fact", Body: fmt.Sprintf("%s %d", what, i), Channel: "user"}); err != nil {
			t.Fatal(err)
		}
	}
}

// A client that pinned a checkpoint catches a server whose store was then
// rolled back (a smaller log) or rolled back and written again (another
// history of a larger size); its twin, an honest growing log, passes each
// check and moves the pin forward, also across a restart with the pin
// saved.
func TestPinCatchesRollback(t *testing.T) {
	ctx := t.Context()
	dir, old := t.TempDir(), t.TempDir()
	url, svc, stop := storeServer(t, dir)
	vkey, err := svc.VerifierKey("acme")
	if err != nil {
		t.Fatal(err)
	}
	_, token, err := svc.AddPrincipal(ctx, custody.PrincipalInput{Tenant: "acme", Name: "alice", Roles: []string{"user"}})
	if err != nil {
		t.Fatal(err)
	}
	alice := client.New(url, token)
	remember(t, alice, 2, "before the copy")
	stop()
	copyStore(t, dir, old) // the copy the store is rolled back to later

	url, _, stop = storeServer(t, dir)
	alice = client.New(url, token)
	pin, err := client.NewPin(alice, vkey, nil)
	if err != nil {
		t.Fatal(err)
	}
	first, err := pin.Checkpoint(ctx)
	if err != nil {
		t.Fatalf("first checkpoint: %v", err)
	}
	remember(t, alice, 3, "after the copy")
	grown, err := pin.Checkpoint(ctx)
	if err != nil || grown.Size <= first.Size {
		t.Fatalf("checkpoint of the grown log = %+v, %v; want it to extend size %d", grown, err, first.Size)
	}
	if again, err := pin.Checkpoint(ctx); err != nil || again.Size != grown.Size {
		t.Fatalf("checkpoint of the same log again = %+v, %v", again, err)
	}
	saved := pin.Note()
	stop()

	// The honest restart: the saved pin still holds, and the log grows on.
	url, _, stop = storeServer(t, dir)
	alice = client.New(url, token)
	pin, err = client.NewPin(alice, vkey, saved)
	if err != nil {
		t.Fatal(err)
	}
	remember(t, alice, 1, "after the restart")
	if cp, err := pin.Checkpoint(ctx); err != nil || cp.Size != grown.Size+1 {
		t.Fatalf("checkpoint after an honest restart = %+v, %v; want size %d", cp, err, grown.Size+1)
	}
	saved = pin.Note()
	stop()

	// Rolled back to the copy: a smaller log.
	copyStore(t, old, dir)
	url, _, stop = storeServer(t, dir)
	defer func() { stop() }()
	alice = client.New(url, token)
	pin, err = client.NewPin(alice, vkey, saved)
	if err != nil {
		t.Fatal(err)
	}
	pinned, _ := pin.Pinned()
	_, err = pin.Checkpoint(ctx)
	if !errors.Is(err, client.ErrLogInconsistent) || !strings.Contains(err.Error(), "rolled back") {
		t.Fatalf("checkpoint of the rolled-back log = %v; want ErrLogInconsistent saying it was rolled back", err)
	}
	if now, _ := pin.Pinned(); now.Size != pinned.Size {
		t.Errorf("the pin moved to size %d on an inconsistent log; want it kept at %d", now.Size, pinned.Size)
	}

	// Written again past the pinned size: another history, no proof links it.
	remember(t, alice, int(pinned.Size), "another history")
	_, err = pin.Checkpoint(ctx)
	if !errors.Is(err, client.ErrLogInconsistent) || !strings.Contains(err.Error(), "rewritten") {
		t.Fatalf("checkpoint of the rewritten log = %v; want ErrLogInconsistent saying history was rewritten", err)
	}

	// A checkpoint is taken only under the server's key.
	otherKey, _, err := tlog.LoadOrCreateServerKey(filepath.Join(t.TempDir(), "other.key"))
	if err != nil {
		t.Fatal(err)
	}
	otherV, err := note.NewEd25519VerifierKey(svc.LogOrigin("acme"), otherKey.PublicKey())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.NewPin(alice, otherV, saved); err == nil {
		t.Error("a saved pin verified under another server's key")
	}
	other, err := client.NewPin(alice, otherV, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Checkpoint(ctx); err == nil || !strings.Contains(err.Error(), "does not verify") {
		t.Errorf("checkpoint under another server's key = %v; want it refused", err)
	}
}
