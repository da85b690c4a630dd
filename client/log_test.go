package client_test

import (
	"context"
	"encoding/base64"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/custody-mem/custody"
	"github.com/custody-mem/custody/client"
	"github.com/custody-mem/custody/httpapi"
	"github.com/custody-mem/custody/sqlite"
	"github.com/custody-mem/custody/tlog"
)

// The client proves an entry's inclusion by its leaf hash, whether the
// server showed it in full (alice's own record) or redacted (to bob, who
// may not read it); a leaf hash that was changed fails.
func TestVerifyInclusionOfRedactedEntries(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store, err := sqlite.Open(ctx, filepath.Join(dir, "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	key, _, err := tlog.LoadOrCreateServerKey(filepath.Join(dir, "server.key"))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := custody.New(store, key, custody.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(httpapi.New(svc, httpapi.Options{Logger: slog.New(slog.DiscardHandler)}).Handler())
	t.Cleanup(func() { srv.Close(); store.Close() })
	as := func(name string) *client.Client {
		_, tok, err := svc.AddPrincipal(ctx, custody.PrincipalInput{Tenant: "acme", Name: name, Roles: []string{"user"}})
		if err != nil {
			t.Fatal(err)
		}
		return client.New(srv.URL, tok)
	}
	alice, bob := as("alice"), as("bob")
	d, err := alice.Remember(ctx, httpapi.MemoryRequest{Namespace: "vault", Key: "pin", Class: "fact", Body: "1234", Channel: "user"})
	if err != nil {
		t.Fatal(err)
	}
	note, err := bob.Checkpoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := svc.OpenCheckpoint("acme", note)
	if err != nil {
		t.Fatal(err)
	}
	entry := func(c *client.Client) httpapi.LogEntry {
		t.Helper()
		es, err := c.LogEntries(ctx, d.LogIndex, d.LogIndex+1)
		if err != nil || len(es) != 1 {
			t.Fatalf("LogEntries = %v, %v", es, err)
		}
		return es[0]
	}
	mine, theirs := entry(alice), entry(bob)
	if mine.Redacted() || mine.RecordID != d.ID || !theirs.Redacted() || theirs.RecordID != "" || theirs.LeafHash != mine.LeafHash {
		t.Fatalf("alice's view %+v, bob's %+v: want hers full, his redacted, one leaf hash", mine, theirs)
	}
	if err := alice.VerifyInclusion(ctx, mine, cp); err != nil {
		t.Errorf("alice's full entry: %v", err)
	}
	if err := bob.VerifyInclusion(ctx, theirs, cp); err != nil {
		t.Errorf("bob's redacted entry: %v", err)
	}
	h, _ := base64.StdEncoding.DecodeString(theirs.LeafHash)
	h[0] ^= 1
	theirs.LeafHash = base64.StdEncoding.EncodeToString(h)
	if err := bob.VerifyInclusion(ctx, theirs, cp); err == nil {
		t.Error("a changed leaf hash verified")
	}
	mine.LeafHash = theirs.LeafHash
	if err := alice.VerifyInclusion(ctx, mine, cp); err == nil {
		t.Error("a full entry whose leaf does not hash to its leaf hash verified")
	}
}

// InclusionProofs proves many leaves in one call; each proof checks
// against the checkpoint with its own leaf's hash and no other.
func TestInclusionProofs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store, err := sqlite.Open(ctx, filepath.Join(dir, "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	key, _, err := tlog.LoadOrCreateServerKey(filepath.Join(dir, "server.key"))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := custody.New(store, key, custody.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(httpapi.New(svc, httpapi.Options{Logger: slog.New(slog.DiscardHandler)}).Handler())
	t.Cleanup(func() { srv.Close(); store.Close() })
	_, tok, err := svc.AddPrincipal(ctx, custody.PrincipalInput{Tenant: "acme", Name: "alice", Roles: []string{"user"}})
	if err != nil {
		t.Fatal(err)
	}
	alice := client.New(srv.URL, tok)
	for _, b := range []string{"one", "two", "three"} {
		if _, err := alice.Remember(ctx, httpapi.MemoryRequest{Namespace: "n", Class: "episode", Body: b, Channel: "user"}); err != nil {
			t.Fatal(err)
		}
	}
	note, err := alice.Checkpoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := svc.OpenCheckpoint("acme", note)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := alice.LogEntries(ctx, 0, cp.Size)
	if err != nil {
		t.Fatal(err)
	}
	indexes := make([]uint64, cp.Size)
	for i := range indexes {
		indexes[i] = uint64(i)
	}
	got, err := alice.InclusionProofs(ctx, indexes, cp.Size)
	if err != nil || len(got.Proofs) != len(indexes) {
		t.Fatalf("InclusionProofs = %+v, %v", got, err)
	}
	for i, p := range got.Proofs {
		var proof [][]byte
		for _, h := range p.Hashes {
			b, _ := base64.StdEncoding.DecodeString(h)
			proof = append(proof, b)
		}
		for j, e := range entries {
			h, err := e.Hash()
			if err != nil {
				t.Fatal(err)
			}
			err = tlog.VerifyInclusion(h, p.Index, cp.Size, proof, cp.Root)
			if (j == i) != (err == nil) {
				t.Fatalf("proof of leaf %d checked with leaf %d's hash: %v", i, j, err)
			}
		}
	}
	if _, err := alice.InclusionProofs(ctx, []uint64{cp.Size}, cp.Size); err == nil {
		t.Fatal("a proof of an index outside the tree was given")
	}
}
