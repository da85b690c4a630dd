package postgres_test

import (
	"fmt"
	"maps"
	"path/filepath"
	"sync"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/embed"
	"github.com/custody-mem/custody/postgres"
	"github.com/custody-mem/custody/tlog"
)

// formsServers opens n stores on a new database, whose copies are built
// inline, and gives on, which makes a service on one of them with the
// embedder emb (nil: glove) and the server key they share.
func formsServers(t *testing.T, n int) (stores []*postgres.Store, on func(st *postgres.Store, emb embed.Embedder) *custody.Service) {
	t.Helper()
	postgres.TuneSearchCopies(t, 20000, 0)
	dsn := newDatabase(t)
	key, _, err := tlog.LoadOrCreateServerKey(filepath.Join(t.TempDir(), "server.key"))
	if err != nil {
		t.Fatal(err)
	}
	glove, err := embed.NewGlove()
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		stores = append(stores, openDSN(t, dsn))
	}
	return stores, func(st *postgres.Store, emb embed.Embedder) *custody.Service {
		if emb == nil {
			emb = glove
		}
		svc, err := custody.New(st, key, custody.Options{Embedder: emb})
		if err != nil {
			t.Fatal(err)
		}
		return svc
	}
}

// semanticScores is the score of each record svc's semantic search for
// query finds for c (all of them: the limit passes the records).
func semanticScores(t *testing.T, svc *custody.Service, c *custody.Caller, query string) map[string]float64 {
	t.Helper()
	res, err := svc.SearchRanked(t.Context(), c, custody.SearchInput{Query: query, Mode: custody.ModeSemantic, Limit: 100})
	if err != nil || res.Mode != custody.ModeSemantic {
		t.Fatalf("semantic search %q: %v (mode %v)", query, err, res)
	}
	out := make(map[string]float64, len(res.Items))
	for _, r := range res.Items {
		out[r.ID] = r.Score
	}
	return out
}

// The forms the semantic list derived of its candidates are kept beside
// the tenant's copy, and a later search scores the candidates by them,
// asking PostgreSQL for their ids alone: it finds what a server with no
// copy finds, which reads and scores every text. A scorer that cannot
// score a kept form (another embedder on the same store) is given the
// text. An erasure, written through another server, takes the erased
// record's form out of memory, its bytes with it, as the copy learns of
// it; the other forms stay kept.
func TestSearchCopyKeepsTheForms(t *testing.T) {
	ctx := t.Context()
	stores, on := formsServers(t, 3)
	writerStore, readerStore, plainStore := stores[0], stores[1], stores[2]
	plainStore.SetSearchMemory(0)
	builtin, err := embed.NewBuiltin(0)
	if err != nil {
		t.Fatal(err)
	}
	writer := on(writerStore, nil)
	reader, readerBuiltin := on(readerStore, nil), on(readerStore, builtin)
	plain, plainBuiltin := on(plainStore, nil), on(plainStore, builtin)
	alice := copyUser(t, writer, "alice", "user")
	remember := func(body string) *custody.Decision {
		t.Helper()
		d, err := writer.Remember(ctx, alice, custody.Candidate{Namespace: "notes", Class: custody.ClassEpisode, Body: body, Channel: "user"})
		if err != nil {
			t.Fatalf("remember %q: %v", body, err)
		}
		return d
	}
	for i := range 30 {
		remember(fmt.Sprintf("the invoice %d from the harbour supplier was paid on time", i))
	}
	secret := remember("the invoice of the zqxjvorb account is overdue")
	queries := []string{"invoice payment", "harbour supplier bill", "overdue invoice"}
	same := func(reader, plain *custody.Service) {
		t.Helper()
		for _, q := range queries {
			got, want := semanticScores(t, reader, alice, q), semanticScores(t, plain, alice, q)
			if len(want) == 0 || !maps.Equal(got, want) {
				t.Fatalf("semantic search %q: the copy with its forms scored %v, a server without a copy %v", q, got, want)
			}
		}
	}
	same(reader, plain)
	n, holds := readerStore.KeptForms("acme", []byte("zqxjvorb"))
	if n != 31 || !holds {
		t.Fatalf("after the first searches the copy keeps %d forms (holding the unknown word: %v); want 31, holding it", n, holds)
	}
	asked, served := readerStore.CopyAsked(), readerStore.FormsServed()
	same(reader, plain) // scored by the kept forms
	if readerStore.CopyAsked() == asked || readerStore.FormsServed()-served < 31 {
		t.Fatalf("the searches after asked PostgreSQL about %d records and gave %d by their kept forms; want some, and every candidate at least once",
			readerStore.CopyAsked()-asked, readerStore.FormsServed()-served)
	}
	same(readerBuiltin, plainBuiltin) // the built-in embedder cannot score glove's forms: it is given the texts

	if _, err := writer.Forget(ctx, alice, secret.ID, "mistake", true); err != nil {
		t.Fatal(err)
	}
	if got := semanticScores(t, reader, alice, "overdue invoice"); len(got) == 0 || got[secret.ID] != 0 {
		t.Fatalf("the erased record was found: %v", got)
	}
	if n, holds := readerStore.KeptForms("acme", []byte("zqxjvorb")); holds || n != 30 {
		t.Fatalf("after the erasure the copy keeps %d forms, holding the erased record's word: %v; want 30, not holding it", n, holds)
	}
	same(reader, plain)
}

// Semantic searches beside erasures written through another server: no
// search fails, none after the erasures finds an erased record, and once
// the copy has learnt of them no erased record's own word is in the kept
// forms' bytes, while the others' are.
func TestSearchCopyFormsUnderErasures(t *testing.T) {
	ctx := t.Context()
	stores, on := formsServers(t, 2)
	readerStore := stores[1]
	writer, reader := on(stores[0], nil), on(readerStore, nil)
	alice := copyUser(t, writer, "alice", "user")
	word := func(i int) string { return fmt.Sprintf("zq%cv%cx", 'a'+i%26, 'a'+i/26) }
	ids := make([]string, 40)
	for i := range ids {
		d, err := writer.Remember(ctx, alice, custody.Candidate{Namespace: "notes", Class: custody.ClassEpisode,
			Body: fmt.Sprintf("the invoice of account %s was paid", word(i)), Channel: "user"})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = d.ID
	}
	semanticScores(t, reader, alice, "invoice payment") // keeps the forms
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for range 3 {
		wg.Go(func() {
			for range 20 {
				if _, err := reader.SearchRanked(ctx, alice, custody.SearchInput{Query: "invoice payment", Mode: custody.ModeSemantic, Limit: 100}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	for i := 0; i < len(ids); i += 2 {
		if _, err := writer.Forget(ctx, alice, ids[i], "mistake", true); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("a search beside the erasures: %v", err)
	}
	got := semanticScores(t, reader, alice, "invoice payment")
	for i, id := range ids {
		_, found := got[id]
		if found == (i%2 == 0) {
			t.Fatalf("record %d (erased: %v) found: %v", i, i%2 == 0, found)
		}
		_, holds := readerStore.KeptForms("acme", []byte(word(i)))
		if holds == (i%2 == 0) {
			t.Fatalf("record %d (erased: %v): the kept forms hold its own word: %v", i, i%2 == 0, holds)
		}
	}
}
