package main

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
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

// TestReindexEmbeddings: custody reindex --embeddings with an embedder
// that stores vectors (openai, here a server of its protocol) computes
// every record's; with the built-in one, which stores none, it drops
// every stored vector and computes nothing.
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
	if n, err := svc.EmbedPending(ctx); err != nil || n != 0 {
		t.Fatalf("embed with the built-in embedder: %d %v; want 0 (it stores no vectors)", n, err)
	}
	st.Close()
	vectorOf := func() (string, int, error) {
		st, err := sqlite.Open(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		return st.VectorOf(ctx, "acme", d.ID)
	}

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Input []string }
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		data := []item{}
		for i, s := range req.Input {
			data = append(data, item{i, []float32{float32(len(s)), 1, 0}})
		}
		json.NewEncoder(w).Encode(map[string]any{"data": data})
	}))
	defer srv.Close()
	out, errOut, err := run(t, "", runReindex, "--db", db, "--embeddings", "--embedder", "openai", "--embedder-url", srv.URL+"/v1", "--embedder-model", "m")
	if err != nil || !strings.Contains(out, "ok: computed the vectors of 1 records with openai:") {
		t.Fatalf("reindex --embeddings --embedder openai: %v\n%s%s", err, out, errOut)
	}
	if model, dim, err := vectorOf(); err != nil || dim != 3 || !strings.HasPrefix(model, "openai:") {
		t.Errorf("vector after reindex with openai: %s %d %v; want the openai model's, 3 dimensions", model, dim, err)
	}

	out, errOut, err = run(t, "", runReindex, "--db", db, "--embeddings", "--embedder", "builtin", "--embedder-dim", "128")
	if err != nil || !strings.Contains(out, "ok: dropped every stored vector; builtin-") || !strings.Contains(out, "-128 stores none") {
		t.Fatalf("reindex --embeddings --embedder builtin: %v\n%s%s", err, out, errOut)
	}
	if model, _, err := vectorOf(); !errors.Is(err, custody.ErrNotFound) {
		t.Errorf("vector after reindex with the built-in embedder: %q %v; want none", model, err)
	}
	out, errOut, err = run(t, "", runReindex, "--db", db, "--embeddings")
	if err != nil || !strings.Contains(out, "ok: dropped every stored vector; glove-") {
		t.Fatalf("reindex --embeddings with the default embedder (glove): %v\n%s%s", err, out, errOut)
	}
	if _, _, err := run(t, "", runReindex, "--db", db, "--embeddings", "--embedder", "none"); err == nil {
		t.Error("reindex --embeddings --embedder none succeeded")
	}
}
