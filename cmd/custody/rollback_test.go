package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	custody "github.com/custody-mem/custody"
)

// rolledBack is a closed SQLite store with a copy of its files taken
// before its last writes (db and checkpoint file), and the checkpoint it
// published after them, saved elsewhere.
type rolledBack struct {
	sf     storeFlags
	backup string // directory holding the older copy
	saved  string // the newer checkpoint, saved outside the store
}

func newRolledBack(t *testing.T) rolledBack {
	t.Helper()
	dir := t.TempDir()
	rb := rolledBack{sf: storeFlags{db: filepath.Join(dir, "c.db")}, backup: t.TempDir(),
		saved: filepath.Join(t.TempDir(), "saved.checkpoint")}
	write := func(bodies ...string) {
		svc, st, err := rb.sf.open(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		var p *custody.Principal
		err = st.View(t.Context(), func(tx custody.Tx) (err error) {
			p, err = tx.Principal(t.Context(), "acme", "alice")
			return err
		})
		if errors.Is(err, custody.ErrNotFound) {
			p, _, err = svc.AddPrincipal(t.Context(), custody.PrincipalInput{Tenant: "acme", Name: "alice", Roles: []string{"user"}})
		}
		if err != nil {
			t.Fatal(err)
		}
		alice := &custody.Caller{Principal: p, Subject: p}
		for _, b := range bodies {
			if _, err := svc.Remember(t.Context(), alice, custody.Candidate{Namespace: "n", Class: custody.ClassFact, Body: b, Channel: "user"}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := svc.Checkpoint(t.Context(), "acme"); err != nil {
			t.Fatal(err)
		}
	}
	write("first")
	copyFiles(t, filepath.Dir(rb.sf.db), rb.backup, "c.db", "c.db-wal", "c.db-shm", "c.db.checkpoint")
	write("second", "third")
	copyFile(t, rb.sf.checkpointPath(), rb.saved)
	return rb
}

// rollBack puts the older copy back: the database, and the checkpoint file
// too when withFile.
func (rb rolledBack) rollBack(t *testing.T, withFile bool) {
	t.Helper()
	names := []string{"c.db", "c.db-wal", "c.db-shm"}
	if withFile {
		names = append(names, "c.db.checkpoint")
	}
	copyFiles(t, rb.backup, filepath.Dir(rb.sf.db), names...)
}

func copyFiles(t *testing.T, from, to string, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := os.Stat(filepath.Join(from, n)); errors.Is(err, os.ErrNotExist) {
			os.Remove(filepath.Join(to, n))
			continue
		}
		copyFile(t, filepath.Join(from, n), filepath.Join(to, n))
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func verifyOut(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := runVerify(t.Context(), args, &out, &errOut)
	return out.String(), errOut.String(), err
}

// A store rolled back together with its checkpoint file passes a plain
// verify, but not one given the newer checkpoint saved elsewhere; before
// the rollback, the same saved checkpoint verifies.
func TestVerifyRolledBackWithSavedCheckpoint(t *testing.T) {
	rb := newRolledBack(t)
	if out, _, err := verifyOut(t, "--db", rb.sf.db, "--checkpoint", rb.saved); err != nil || !strings.HasPrefix(out, "ok: ") {
		t.Fatalf("verify of the honest store with its saved checkpoint = %v, %q", err, out)
	}
	rb.rollBack(t, true)
	out, _, err := verifyOut(t, "--db", rb.sf.db, "--checkpoint", rb.saved)
	if err == nil || !strings.Contains(err.Error(), "rolled back") {
		t.Fatalf("verify of the rolled-back store with the newer saved checkpoint = %v, %q; want a rollback reported", err, out)
	}
}

// Without the checkpoint file beside the store, verify says so loudly (and
// that the store holds checkpoints a server published); with it, it says
// nothing of the kind.
func TestVerifyWarnsWithoutCheckpointFile(t *testing.T) {
	rb := newRolledBack(t)
	out, errOut, err := verifyOut(t, "--db", rb.sf.db)
	if err != nil || !strings.HasPrefix(out, "ok: ") || strings.Contains(errOut, "WARNING") {
		t.Fatalf("verify with the checkpoint file = %v, %q, stderr %q; want ok and no warning", err, out, errOut)
	}
	if err := os.Remove(rb.sf.checkpointPath()); err != nil {
		t.Fatal(err)
	}
	_, errOut, err = verifyOut(t, "--db", rb.sf.db)
	for _, want := range []string{"WARNING: no checkpoint file at " + rb.sf.checkpointPath(), "hide a rollback", "--checkpoint FILE"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("verify without the checkpoint file (err %v) printed %q; want it to say %q", err, errOut, want)
		}
	}
}

// verify never creates a store or a key: a missing one is refused by name.
func TestVerifyRefusesMissingStore(t *testing.T) {
	db := filepath.Join(t.TempDir(), "absent.db")
	_, _, err := verifyOut(t, "--db", db)
	if err == nil || !strings.Contains(err.Error(), "no store at "+db) {
		t.Fatalf("verify of a missing store = %v; want it refused by name", err)
	}
	for _, f := range []string{db, db + ".key", db + "-wal"} {
		if _, err := os.Stat(f); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("verify of a missing store left %s behind", f)
		}
	}
	var help bytes.Buffer
	if err := runVerify(t.Context(), []string{"-h"}, &help, &help); !errors.Is(err, flag.ErrHelp) || strings.Contains(help.String(), "created if absent") ||
		!strings.Contains(help.String(), "never created") {
		t.Errorf("verify -h = %v, %q; want it to say the store is never created", err, help.String())
	}
}

// watch is a stderr for runServe that tells when the server is serving.
type watch struct {
	mu      sync.Mutex
	b       strings.Builder
	serving chan struct{}
	once    sync.Once
}

func (w *watch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b.Write(p)
	if strings.Contains(w.b.String(), "custody is serving on") {
		w.once.Do(func() { close(w.serving) })
	}
	return len(p), nil
}

func (w *watch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// serve runs custody serve with args until it serves, then stops it; it
// returns what it printed and its error (an error before serving, too).
func serve(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	w := &watch{serving: make(chan struct{})}
	done := make(chan error, 1)
	go func() { done <- runServe(ctx, append([]string{"--addr", "127.0.0.1:0"}, args...), &bytes.Buffer{}, w) }()
	select {
	case err := <-done:
		return w.String(), err
	case <-w.serving:
		cancel()
		return w.String(), <-done
	}
}

// The server refuses a store rolled back behind the checkpoint file it
// published, and a store whose checkpoint file was removed; it says what
// happened and what to do. With --accept-rollback it starts, and from then
// on the file matches the store. An honest store starts without a word.
func TestServeRefusesRolledBackStore(t *testing.T) {
	rb := newRolledBack(t)
	if out, err := serve(t, "--db", rb.sf.db); err != nil || strings.Contains(out, "WARNING") {
		t.Fatalf("serve on the honest store = %v, printed %q", err, out)
	}

	rb.rollBack(t, false) // the database only: the checkpoint file is newer
	_, err := serve(t, "--db", rb.sf.db)
	if err == nil {
		t.Fatal("serve started on a store rolled back behind its checkpoint file")
	}
	for _, want := range []string{"refusing to start", "rolled back", "custody verify --db " + rb.sf.db + " --checkpoint FILE", "--accept-rollback"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("serve's refusal %q does not say %q", err, want)
		}
	}
	out, err := serve(t, "--db", rb.sf.db, "--accept-rollback")
	if err != nil || !strings.Contains(out, "WARNING: starting as --accept-rollback says") {
		t.Fatalf("serve --accept-rollback = %v, printed %q", err, out)
	}
	if out, err := serve(t, "--db", rb.sf.db); err != nil || strings.Contains(out, "WARNING") {
		t.Fatalf("serve after the accepted rollback = %v, printed %q; want a plain start", err, out)
	}

	// The checkpoint file removed, the store holding checkpoints: refused.
	if err := os.Remove(rb.sf.checkpointPath()); err != nil {
		t.Fatal(err)
	}
	if _, err := serve(t, "--db", rb.sf.db); err == nil || !strings.Contains(err.Error(), "is missing") {
		t.Fatalf("serve without its checkpoint file = %v; want a refusal saying the file is missing", err)
	}
}

// A store filled by offline commands before any server published a
// checkpoint starts with a warning, and publishes its first checkpoint.
func TestServeWarnsOnUnpublishedStore(t *testing.T) {
	sf := storeWithSummary(t)
	out, err := serve(t, "--db", sf.db)
	if err != nil || !strings.Contains(out, "WARNING: no checkpoint file at "+sf.checkpointPath()) {
		t.Fatalf("serve on a store never served = %v, printed %q; want a start with a warning", err, out)
	}
	if _, err := os.Stat(sf.checkpointPath()); err != nil {
		t.Fatalf("serve published no checkpoint file: %v", err)
	}
}
