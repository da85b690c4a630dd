package storetest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/tlog"
	"golang.org/x/mod/sumdb/note"
)

// CheckPublished holds the store's log to the checkpoint file the server
// published: a file ahead of the log, of another history or of another key
// is a rollback, and so is a missing file while the store holds
// checkpoints; the genuine file, or none on a store never checkpointed,
// passes. Checkpoint does not overwrite a file ahead of the log;
// AcceptRollback does.
func testCheckPublished(t *testing.T, e *env) {
	dir := t.TempDir()
	file := filepath.Join(dir, "checkpoint")
	key, _, err := tlog.LoadOrCreateServerKey(filepath.Join(dir, "server.key"))
	if err != nil {
		t.Fatal(err)
	}
	pol, err := custody.ParsePolicy(policyText)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := custody.New(e.store, key, custody.Options{Now: e.clock.Now, Policy: pol, CheckpointFile: file})
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, wantErr string) *custody.Published {
		t.Helper()
		p, err := svc.CheckPublished(e.ctx)
		switch {
		case wantErr == "" && err != nil:
			t.Fatalf("%s: CheckPublished = %v, want no error", what, err)
		case wantErr != "" && (!errors.Is(err, custody.ErrRolledBack) || !strings.Contains(err.Error(), wantErr)):
			t.Fatalf("%s: CheckPublished = %v, want ErrRolledBack saying %q", what, err, wantErr)
		}
		return p
	}
	if p := check("an empty store", ""); !p.Missing || p.LogSize != 0 || p.HasStored {
		t.Errorf("an empty store: %+v", p)
	}
	p, _, err := svc.AddPrincipal(e.ctx, custody.PrincipalInput{Tenant: "acme", Name: "alice", Roles: []string{"user"}})
	if err != nil {
		t.Fatal(err)
	}
	alice, err := svc.Act(e.ctx, p, "")
	if err != nil {
		t.Fatal(err)
	}
	write := func(body string) {
		t.Helper()
		if _, err := svc.Remember(e.ctx, alice, custody.Candidate{Namespace: "n", Class: custody.ClassFact, Body: body, Channel: custody.ChannelUser}); err != nil {
			t.Fatal(err)
		}
	}
	write("one")
	if p := check("a store never checkpointed", ""); !p.Missing || p.LogSize != 2 || p.HasStored {
		t.Errorf("a store never checkpointed: %+v", p)
	}
	if _, err := svc.Checkpoint(e.ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	genuine, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	write("two")
	if p := check("the genuine file behind a grown log", ""); p.Missing || p.Size != 2 || p.LogSize != 3 || !p.HasStored {
		t.Errorf("the genuine file: %+v", p)
	}

	signer, _, err := tlog.NewNoteSigner(svc.LogOrigin("acme"), key.SigningKey())
	if err != nil {
		t.Fatal(err)
	}
	sign := func(s note.Signer, size uint64, root []byte) []byte {
		t.Helper()
		msg, err := tlog.SignCheckpoint(tlog.Checkpoint{Origin: svc.LogOrigin("acme"), Size: size, Root: root}, s)
		if err != nil {
			t.Fatal(err)
		}
		return msg
	}
	put := func(msg []byte) {
		t.Helper()
		if err := os.WriteFile(file, msg, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	other := make([]byte, tlog.HashSize)
	other[0] = 1
	put(sign(signer, 5, other))
	check("a file ahead of the log", "covers 5 entries of acme's log but the store's log has only 3")
	ahead, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Checkpoint(e.ctx, "acme"); !errors.Is(err, custody.ErrRolledBack) {
		t.Errorf("Checkpoint over a file ahead of the log = %v, want ErrRolledBack", err)
	}
	if now, err := os.ReadFile(file); err != nil || string(now) != string(ahead) {
		t.Errorf("Checkpoint replaced a file ahead of the log (%v)", err)
	}
	if _, err := svc.AcceptRollback(e.ctx); err != nil {
		t.Fatalf("AcceptRollback: %v", err)
	}
	check("the file after AcceptRollback", "")
	put(ahead)
	put(sign(signer, 2, other))
	check("a file of another history", "another root")
	otherKey, _, err := tlog.LoadOrCreateServerKey(filepath.Join(dir, "other.key"))
	if err != nil {
		t.Fatal(err)
	}
	otherSigner, _, err := tlog.NewNoteSigner(svc.LogOrigin("acme"), otherKey.SigningKey())
	if err != nil {
		t.Fatal(err)
	}
	root, err := tlog.RootHash(e.ctx, custody.LogOf(e.store, "acme"), 2)
	if err != nil {
		t.Fatal(err)
	}
	put(sign(otherSigner, 2, root))
	check("a file signed by another key", "does not verify")
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	check("no file, checkpoints stored", "is missing")

	put(genuine)
	check("the genuine file again", "")
}
