package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/embed"
)

// flakyEmbedder is an embedder that fails while down is set.
type flakyEmbedder struct {
	embed.Embedder
	mu   sync.Mutex
	down bool
}

func (f *flakyEmbedder) setDown(d bool) { f.mu.Lock(); f.down = d; f.mu.Unlock() }

func (f *flakyEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	f.mu.Lock()
	down := f.down
	f.mu.Unlock()
	if down {
		return nil, errors.New("connection refused")
	}
	return f.Embedder.Embed(ctx, texts)
}

// withEmbedder gives e a service with the embedder emb (nil: none) over
// the same store, key and clock.
func (e *env) withEmbedder(emb embed.Embedder) {
	e.t.Helper()
	pol, err := custody.ParsePolicy(policyText)
	if err != nil {
		e.t.Fatal(err)
	}
	svc, err := custody.New(e.store, e.svc.ServerKey(), custody.Options{Now: e.clock.Now, Policy: pol, Embedder: emb})
	if err != nil {
		e.t.Fatal(err)
	}
	e.svc = svc
}

func builtinEmbedder(t *testing.T, dim int) *embed.Builtin {
	t.Helper()
	b, err := embed.NewBuiltin(dim)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (e *env) embedPending() int {
	e.t.Helper()
	n, err := e.svc.EmbedPending(e.ctx)
	if err != nil {
		e.t.Fatalf("embed pending: %v", err)
	}
	return n
}

func (e *env) ranked(c *custody.Caller, in custody.SearchInput) *custody.SearchResult {
	e.t.Helper()
	res, err := e.svc.SearchRanked(e.ctx, c, in)
	if err != nil {
		e.t.Fatalf("search %+v: %v", in, err)
	}
	return res
}

func itemIDs(res *custody.SearchResult) []string {
	return scoredIDs(res.Items)
}

// A paraphrase that shares no word with a record finds it by meaning
// (semantic and hybrid search), where lexical search finds nothing; each
// item says which lists found it.
func testSemanticParaphrase(t *testing.T, e *env) {
	e.withEmbedder(builtinEmbedder(t, 0))
	alice := e.user("acme", "alice")
	short := e.fact(alice, "prefs", "I like short answers").ID
	for _, b := range []string{"the garden needs watering on sunday", "invoice 4411 is due on friday", "concert tickets for the weekend"} {
		e.fact(alice, "notes", b)
	}
	// The built-in embedder is static: nothing is left to embed.
	if n := e.embedPending(); n != 0 {
		t.Errorf("embedded %d records with a static embedder, want 0", n)
	}
	q := "brief replies"
	if got := e.ranked(alice, custody.SearchInput{Query: q, Mode: custody.ModeLexical}); len(got.Items) != 0 || got.Mode != custody.ModeLexical {
		t.Errorf("lexical %q = %v (%s), want nothing: no word is shared", q, itemIDs(got), got.Mode)
	}
	for _, mode := range []custody.SearchMode{custody.ModeSemantic, custody.ModeHybrid, ""} {
		got := e.ranked(alice, custody.SearchInput{Query: q, Mode: mode})
		if len(got.Items) == 0 || got.Items[0].ID != short {
			t.Errorf("%q %s: %v, want %s first", q, mode, itemIDs(got), short)
			continue
		}
		if want := custody.ModeSemantic; mode == custody.ModeSemantic && got.Mode != want {
			t.Errorf("mode %s answered as %s", mode, got.Mode)
		}
		if mode == "" && got.Mode != custody.ModeHybrid {
			t.Errorf("the default mode with an embedder is %s, want hybrid", got.Mode)
		}
		if !slices.Equal(got.Items[0].Lists, []string{"semantic"}) || got.Fallback != "" {
			t.Errorf("%s: lists %v, fallback %q; want [semantic], none", mode, got.Items[0].Lists, got.Fallback)
		}
	}
	// A record both lists find says so, and ranks first in hybrid.
	got := e.ranked(alice, custody.SearchInput{Query: "short answers", Mode: custody.ModeHybrid})
	if len(got.Items) == 0 || got.Items[0].ID != short || !slices.Equal(got.Items[0].Lists, []string{"lexical", "semantic"}) {
		t.Errorf("hybrid \"short answers\": %+v, want %s first found by both lists", got.Items, short)
	}
	// A query of function words only means nothing: no record is near it.
	if got := e.ranked(alice, custody.SearchInput{Query: "what is it", Mode: custody.ModeSemantic}); len(got.Items) != 0 {
		t.Errorf("semantic \"what is it\" = %v, want nothing", itemIDs(got))
	}
	if _, err := e.svc.SearchRanked(e.ctx, alice, custody.SearchInput{Query: q, Mode: "fuzzy"}); !errors.Is(err, custody.ErrInvalid) {
		t.Errorf("mode fuzzy: %v, want ErrInvalid", err)
	}
}

// Semantic and hybrid search rank only the records eligible for the
// subject, inside the query: a quarantined record, an expired one, another
// user's owner-only record and another tenant's, each the nearest vector
// to the query (its very text), are never returned; and more of the other
// user's records with the query's very text than the semantic list reads
// candidates do not push the subject's eligible paraphrase out of a top 5.
// With the built-in embedder this is the indexed path (candidates from the
// lexical index, expanded by WordNet), which also leaves out a record
// sharing nothing with the query but random-indexing noise.
func testSemanticEligibility(t *testing.T, e *env) {
	rec := &recordingStatic{Builtin: builtinEmbedder(t, 0)}
	e.withEmbedder(rec)
	sc := eligibilityScene(t, e)
	sc.check(t, e, true)
	// The built-in embedder scores texts: of alice's searches, none she
	// may not see was read.
	rec.reset()
	for _, mode := range []custody.SearchMode{custody.ModeSemantic, custody.ModeHybrid} {
		e.ranked(sc.alice, custody.SearchInput{Query: sc.q, Mode: mode, Limit: custody.MaxSearchLimit})
	}
	for _, id := range sc.hidden {
		if rec.was(id) {
			t.Fatalf("the semantic list scored the text of %s, which alice may not see", id)
		}
	}
	if !rec.was(sc.shared) || !rec.was(sc.paraphrase) {
		t.Errorf("the semantic list did not score the texts of %s and %s, which alice may see", sc.shared, sc.paraphrase)
	}
	noise := e.fact(sc.alice, "home", "send the rent payment to the flat owner").ID
	e.embedPending()
	if got := itemIDs(e.ranked(sc.alice, custody.SearchInput{Query: sc.q, Mode: custody.ModeSemantic, Limit: custody.MaxSearchLimit})); slices.Contains(got, noise) {
		t.Errorf("semantic search returned %s, which shares no word or synset with %q: %v", noise, sc.q, got)
	}
	// Filters apply inside the semantic query too.
	if got := itemIDs(e.ranked(sc.alice, custody.SearchInput{Query: sc.q, Mode: custody.ModeSemantic, Namespace: "work"})); len(got) != 0 {
		t.Errorf("semantic search in namespace work = %v; want nothing", got)
	}
}

// eligibilityFlood is how many of bob's near-duplicates of the query the
// eligibility scene holds: more than any candidate list reads.
const eligibilityFlood = 450

// scene is the eligibility scene: alice's paraphrase of q (sharing no word
// with it), the tenant's record sharing a word, and records alice may not
// see, each q's very text.
type scene struct {
	alice, bob         *custody.Caller
	q                  string
	paraphrase, shared string
	hidden             []string
}

func eligibilityScene(t *testing.T, e *env) *scene {
	t.Helper()
	sc := &scene{alice: e.user("acme", "alice"), bob: e.user("acme", "bob"), q: "wire the deposit to the new landlord account"}
	mail := e.act(e.principal("acme", "mail", []string{"agent"}, []string{"tool:email"}, nil), "alice")
	// A paraphrase by WordNet (cable ~ wire, landowner ~ landlord) that
	// shares no word with the query.
	sc.paraphrase = e.fact(sc.alice, "home", "cable the payment to the landowner").ID
	sc.shared = e.remember(sc.bob, custody.Candidate{Namespace: "home", Class: custody.ClassFact, Body: "the rent goes to the landlord", Channel: "user", Audience: "tenant"}).ID
	quarantined := e.remember(mail, custody.Candidate{Namespace: "home", Class: custody.ClassFact, Body: sc.q, Channel: "tool:email"})
	if quarantined.State != custody.StateQuarantined {
		t.Fatalf("the email's fact is %s, want quarantined", quarantined.State)
	}
	soon := e.clock.Now().Add(time.Minute)
	expired := e.remember(sc.alice, custody.Candidate{Namespace: "home", Class: custody.ClassFact, Body: sc.q, Channel: "user", ExpiresAt: &soon}).ID
	other := e.fact(e.user("other", "alice"), "home", sc.q).ID
	flood := make([]custody.Candidate, eligibilityFlood)
	for i := range flood {
		flood[i] = custody.Candidate{Namespace: "home", Class: custody.ClassFact, Body: fmt.Sprintf("%s %d", sc.q, i), Channel: "user"}
	}
	ds, err := e.svc.RememberBatch(e.ctx, sc.bob, flood)
	if err != nil {
		t.Fatal(err)
	}
	e.embedPending()
	e.clock.Advance(time.Hour)
	sc.hidden = []string{quarantined.ID, expired, other}
	for _, d := range ds {
		sc.hidden = append(sc.hidden, d.ID)
	}
	return sc
}

// check searches the scene in semantic and hybrid mode: alice's top 5
// holds the tenant's record and, when paraphrases are found, her
// paraphrase; no search of hers returns a hidden record; bob's top 5 is
// five of his own, never alice's.
func (sc *scene) check(t *testing.T, e *env, paraphrases bool) {
	t.Helper()
	for _, mode := range []custody.SearchMode{custody.ModeSemantic, custody.ModeHybrid} {
		got := itemIDs(e.ranked(sc.alice, custody.SearchInput{Query: sc.q, Mode: mode, Limit: 5}))
		if !slices.Contains(got, sc.shared) || paraphrases && !slices.Contains(got, sc.paraphrase) {
			t.Errorf("%s top 5 = %v; want the tenant's %s (and alice's %s: %v)", mode, got, sc.shared, sc.paraphrase, paraphrases)
		}
		all := itemIDs(e.ranked(sc.alice, custody.SearchInput{Query: sc.q, Mode: mode, Limit: custody.MaxSearchLimit}))
		for _, id := range sc.hidden {
			if slices.Contains(all, id) {
				t.Errorf("%s search returned %s, which alice may not see: %v", mode, id, all)
			}
		}
		// Bob sees his own, not alice's owner-only record.
		if got := itemIDs(e.ranked(sc.bob, custody.SearchInput{Query: sc.q, Mode: mode, Limit: 5})); len(got) != 5 || slices.Contains(got, sc.paraphrase) {
			t.Errorf("bob's %s top 5 = %v; want five of his, not alice's %s", mode, got, sc.paraphrase)
		}
	}
}

// When the embedder is down, writes succeed and search falls back to
// lexical ranking and says so; once it is back the worker catches up and
// semantic search finds what was written meanwhile.
func testSemanticFallback(t *testing.T, e *env) {
	emb := &flakyEmbedder{Embedder: builtinEmbedder(t, 0)}
	e.withEmbedder(emb)
	alice := e.user("acme", "alice")
	stored := make(chan int, 64)
	failed := make(chan error, 64)
	emb.setDown(true)
	w := e.svc.StartEmbedding(custody.EmbedWorkerOptions{
		OnStored: func(n int) { stored <- n },
		OnError: func(err error) {
			select {
			case failed <- err:
			default:
			}
		}})
	if w == nil {
		t.Fatal("no worker started with an embedder configured")
	}
	defer w.Close()
	short := e.fact(alice, "prefs", "I like short answers").ID
	if d := e.fact(alice, "notes", "the garden needs watering"); d.State != custody.StateAdmitted {
		t.Errorf("a write while the embedder is down: %s", d.State)
	}
	if err := <-failed; !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("the worker's error: %v", err)
	}
	for _, mode := range []custody.SearchMode{"", custody.ModeHybrid, custody.ModeSemantic} {
		got := e.ranked(alice, custody.SearchInput{Query: "short answers", Mode: mode})
		if got.Mode != custody.ModeLexical || !strings.Contains(got.Fallback, "embedder unavailable: ") || !strings.Contains(got.Fallback, "connection refused") {
			t.Errorf("mode %q with the embedder down: mode %s, fallback %q; want lexical and why", mode, got.Mode, got.Fallback)
		}
		if ids := itemIDs(got); len(ids) != 1 || ids[0] != short || !slices.Equal(got.Items[0].Lists, []string{"lexical"}) {
			t.Errorf("mode %q with the embedder down: %+v, want %s by the lexical list", mode, got.Items, short)
		}
	}
	if _, err := e.svc.EmbedPending(e.ctx); err == nil {
		t.Error("EmbedPending succeeded with the embedder down")
	}
	emb.setDown(false)
	vs := e.svc.Store().(custody.VectorStore)
	hasVector := func(id string) bool { _, _, err := vs.VectorOf(e.ctx, "acme", id); return err == nil }
	for !hasVector(short) { // the worker's next try, after its backoff
		<-stored
	}
	got := e.ranked(alice, custody.SearchInput{Query: "brief replies"})
	if got.Mode != custody.ModeHybrid || got.Fallback != "" || len(got.Items) == 0 || got.Items[0].ID != short {
		t.Errorf("after the embedder is back: %+v", got)
	}
	// New writes are embedded by the worker after they commit.
	later := e.fact(alice, "prefs", "keep replies concise").ID
	for !hasVector(later) {
		<-stored
	}
	// Without an embedder, search is lexical without saying more.
	e.withEmbedder(nil)
	if got := e.ranked(alice, custody.SearchInput{Query: "short answers"}); got.Mode != custody.ModeLexical || got.Fallback != "" {
		t.Errorf("no embedder, default mode: %s, fallback %q; want lexical, none", got.Mode, got.Fallback)
	}
	if got := e.ranked(alice, custody.SearchInput{Query: "short answers", Mode: custody.ModeSemantic}); got.Mode != custody.ModeLexical || !strings.Contains(got.Fallback, "no embedder") {
		t.Errorf("no embedder, semantic mode: %s, fallback %q; want lexical and why", got.Mode, got.Fallback)
	}
}

// Vectors (of an embedder that stores them, as the openai provider's
// are) are stored with their model: after a model change none of the
// old model's vectors is used; the records are listed as unembedded for
// the new model until they are embedded again; DropVectors removes all.
func testSemanticModelChange(t *testing.T, e *env) {
	small := cosineEmbedder{b: builtinEmbedder(t, 64)}
	e.withEmbedder(small)
	alice := e.user("acme", "alice")
	id := e.fact(alice, "prefs", "I like short answers").ID
	e.embedPending()
	vs := e.store.(custody.VectorStore)
	if model, dim, err := vs.VectorOf(e.ctx, "acme", id); err != nil || model != small.Model() || dim != 64 {
		t.Fatalf("vector of %s: %s %d %v; want %s 64", id, model, dim, err, small.Model())
	}
	big := cosineEmbedder{b: builtinEmbedder(t, 128)}
	e.withEmbedder(big)
	if got := e.ranked(alice, custody.SearchInput{Query: "brief replies", Mode: custody.ModeSemantic}); len(got.Items) != 0 {
		t.Errorf("semantic search with a new model used the old model's vectors: %v", itemIDs(got))
	}
	if n := e.embedPending(); n != 1 {
		t.Errorf("embedded %d records for the new model, want 1", n)
	}
	if model, dim, err := vs.VectorOf(e.ctx, "acme", id); err != nil || model != big.Model() || dim != 128 {
		t.Errorf("vector after re-embedding: %s %d %v; want %s 128", model, dim, err, big.Model())
	}
	if got := itemIDs(e.ranked(alice, custody.SearchInput{Query: "brief replies", Mode: custody.ModeSemantic})); !slices.Equal(got, []string{id}) {
		t.Errorf("semantic search with the new model = %v, want [%s]", got, id)
	}
	if err := vs.DropVectors(e.ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := vs.VectorOf(e.ctx, "acme", id); !errors.Is(err, custody.ErrNotFound) {
		t.Errorf("vector after DropVectors: %v, want ErrNotFound", err)
	}
	if n := e.embedPending(); n != 1 {
		t.Errorf("embedded %d records after DropVectors, want 1", n)
	}
}

// Erasing a body erases its vector (of an embedder that stores them) in
// the same transaction, and a vector
// computed before the erasure is not stored after it; the vector of a
// record retired without erasure stays (retrieval never returns it).
func testSemanticErase(t *testing.T, e *env) {
	e.withEmbedder(cosineEmbedder{b: builtinEmbedder(t, 0)})
	alice := e.user("acme", "alice")
	gone := e.fact(alice, "n", "zanzibar passport X1234567").ID
	kept := e.fact(alice, "n", "zanzibar visa appointment").ID
	e.embedPending()
	vs := e.store.(custody.VectorStore)
	for _, id := range []string{gone, kept} {
		if _, _, err := vs.VectorOf(e.ctx, "acme", id); err != nil {
			t.Fatalf("vector of %s before erasure: %v", id, err)
		}
	}
	if _, err := e.svc.Forget(e.ctx, alice, gone, "", true); err != nil {
		t.Fatal(err)
	}
	if _, _, err := vs.VectorOf(e.ctx, "acme", gone); !errors.Is(err, custody.ErrNotFound) {
		t.Errorf("vector of the erased record: %v, want ErrNotFound", err)
	}
	if _, _, err := vs.VectorOf(e.ctx, "acme", kept); err != nil {
		t.Errorf("vector of the record kept: %v", err)
	}
	// A worker that embedded the body before the erasure stores nothing.
	if err := vs.PutVectors(e.ctx, "late", []custody.RecordVector{{Tenant: "acme", ID: gone, Vec: make([]float32, 8)}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := vs.VectorOf(e.ctx, "acme", gone); !errors.Is(err, custody.ErrNotFound) {
		t.Errorf("a late vector of the erased record was stored: %v", err)
	}
	if n := e.embedPending(); n != 0 {
		t.Errorf("embedded %d records after the erasure, want 0 (an erased body has no vector)", n)
	}
	if got := itemIDs(e.ranked(alice, custody.SearchInput{Query: "zanzibar passport", Mode: custody.ModeSemantic})); slices.Contains(got, gone) || !slices.Contains(got, kept) {
		t.Errorf("semantic search after the erasure = %v; want %s, not %s", got, kept, gone)
	}
}
