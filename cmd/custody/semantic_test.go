package main

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/embed"
	"github.com/custody-mem/custody/httpapi"
	"github.com/custody-mem/custody/sqlite"
	"github.com/custody-mem/custody/tlog"
)

// openWithEmbedder opens the store at db with the built-in embedder of dim.
func openWithEmbedder(t *testing.T, db string, dim int) (*custody.Service, *sqlite.Store) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	key, _, err := tlog.LoadOrCreateServerKey(db + ".key")
	if err != nil {
		t.Fatal(err)
	}
	emb, err := embed.NewBuiltin(dim)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := custody.New(st, key, custody.Options{Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	return svc, st
}

// TestSearchMode: custody search --mode; the table shows which lists
// found each memory.
func TestSearchMode(t *testing.T) {
	ctx := context.Background()
	svc, st := openWithEmbedder(t, filepath.Join(t.TempDir(), "c.db"), 0)
	srv := httptest.NewServer(httpapi.New(svc, httpapi.Options{Logger: slog.New(slog.DiscardHandler)}).Handler())
	t.Cleanup(func() { srv.Close(); st.Close() })
	t.Setenv("CUSTODY_URL", srv.URL)
	_, alice, err := svc.AddPrincipal(ctx, custody.PrincipalInput{Tenant: "acme", Name: "alice", Roles: []string{"user"}})
	if err != nil {
		t.Fatal(err)
	}
	rememberID(t, alice, "--namespace", "prefs", "--class", "preference", "I like short answers")
	if _, err := svc.EmbedPending(ctx); err != nil {
		t.Fatal(err)
	}
	out := mustRun(t, alice, runSearch, "--mode", "semantic", "brief", "replies")
	if !strings.HasPrefix(out, "SCORE") || !strings.Contains(out, "semantic") || !strings.Contains(out, "I like short answers") {
		t.Errorf("search --mode semantic:\n%s", out)
	}
	if _, errOut, err := run(t, alice, runSearch, "--mode", "lexical", "brief", "replies"); err != nil || !strings.Contains(errOut, "no eligible memory") {
		t.Errorf("search --mode lexical: %v %s; want no match", err, errOut)
	}
	if _, _, err := run(t, alice, runSearch, "--mode", "fuzzy", "brief"); err == nil || !strings.Contains(err.Error(), "mode") {
		t.Errorf("search --mode fuzzy: %v; want an error naming mode", err)
	}
}

// TestReindexEmbeddings: after a change of model, custody reindex
// --embeddings computes every record's vector with the new one.
func TestReindexEmbeddings(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "c.db")
	svc, st := openWithEmbedder(t, db, 64)
	p, _, err := svc.AddPrincipal(ctx, custody.PrincipalInput{Tenant: "acme", Name: "alice", Roles: []string{"user"}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := svc.Act(ctx, p, "")
	if err != nil {
		t.Fatal(err)
	}
	d, err := svc.Remember(ctx, c, custody.Candidate{Namespace: "prefs", Class: custody.ClassPreference, Body: "I like short answers", Channel: "user"})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := svc.EmbedPending(ctx); err != nil || n != 1 {
		t.Fatalf("embed: %d %v", n, err)
	}
	st.Close()

	out, errOut, err := run(t, "", runReindex, "--db", db, "--embeddings", "--embedder-dim", "128")
	if err != nil || !strings.Contains(out, "ok: computed the vectors of 1 records with builtin-") || !strings.Contains(out, "-128") {
		t.Fatalf("reindex --embeddings: %v\n%s%s", err, out, errOut)
	}
	st2, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	if model, dim, err := st2.VectorOf(ctx, "acme", d.ID); err != nil || dim != 128 || !strings.HasSuffix(model, "-128") {
		t.Errorf("vector after reindex: %s %d %v; want the 128-dimension model's", model, dim, err)
	}
	if _, _, err := run(t, "", runReindex, "--db", db, "--embeddings", "--embedder", "none"); err == nil {
		t.Error("reindex --embeddings --embedder none succeeded")
	}
}
