package storetest

import (
	"errors"
	"slices"
	"sync"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/embed"
)

// recordingStatic is the built-in embedder, noting the id of every
// record whose text one of its scorers was given.
type recordingStatic struct {
	*embed.Builtin
	mu     sync.Mutex
	scored map[string]bool
}

func (r *recordingStatic) Scorer(query string) embed.TextScorer {
	return recordingScorer{r.Builtin.Scorer(query), r}
}

func (r *recordingStatic) reset() {
	r.mu.Lock()
	r.scored = nil
	r.mu.Unlock()
}

func (r *recordingStatic) was(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.scored[id]
}

type recordingScorer struct {
	embed.TextScorer
	r *recordingStatic
}

func (s recordingScorer) Add(id, key, body string) {
	s.r.mu.Lock()
	if s.r.scored == nil {
		s.r.scored = map[string]bool{}
	}
	s.r.scored[id] = true
	s.r.mu.Unlock()
	s.TextScorer.Add(id, key, body)
}

// A static embedder (the built-in one) stores no vectors: no worker runs,
// nothing is pending, no record has a vector, and semantic search finds
// a paraphrase the moment it is written. An embedder that stores vectors
// (as the openai provider does) still has its worker store one per
// record, of its model, after the write.
func testSemanticStatic(t *testing.T, e *env) {
	e.withEmbedder(builtinEmbedder(t, 0))
	alice := e.user("acme", "alice")
	vs := e.store.(custody.VectorStore)
	if w := e.svc.StartEmbedding(custody.EmbedWorkerOptions{}); w != nil {
		w.Close()
		t.Error("an embedding worker started for the built-in embedder, which stores no vectors")
	}
	short := e.fact(alice, "prefs", "I like short answers").ID
	e.fact(alice, "notes", "the garden needs watering on sunday")
	if n := e.embedPending(); n != 0 {
		t.Errorf("%d records embedded for the built-in embedder, want 0", n)
	}
	if model, _, err := vs.VectorOf(e.ctx, "acme", short); !errors.Is(err, custody.ErrNotFound) {
		t.Errorf("the record has a vector of %q (%v); the built-in embedder's are not stored", model, err)
	}
	for _, mode := range []custody.SearchMode{custody.ModeSemantic, custody.ModeHybrid} {
		if got := itemIDs(e.ranked(alice, custody.SearchInput{Query: "brief replies", Mode: mode})); len(got) == 0 || got[0] != short {
			t.Errorf("%s search right after the write: %v, want %s first", mode, got, short)
		}
	}

	stored := make(chan int, 16)
	cos := cosineEmbedder{b: builtinEmbedder(t, 64)}
	e.withEmbedder(cos)
	w := e.svc.StartEmbedding(custody.EmbedWorkerOptions{OnStored: func(n int) { stored <- n }})
	if w == nil {
		t.Fatal("no worker started for an embedder that stores vectors")
	}
	defer w.Close()
	later := e.fact(alice, "prefs", "keep replies concise").ID
	for _, id := range []string{short, later} {
		for {
			model, dim, err := vs.VectorOf(e.ctx, "acme", id)
			if err == nil {
				if model != cos.Model() || dim != 64 {
					t.Errorf("vector of %s: %s %d, want %s 64", id, model, dim, cos.Model())
				}
				break
			}
			if !errors.Is(err, custody.ErrNotFound) {
				t.Fatal(err)
			}
			<-stored // the worker's next batch
		}
	}
	if got := itemIDs(e.ranked(alice, custody.SearchInput{Query: "brief replies", Mode: custody.ModeSemantic})); !slices.Contains(got, short) {
		t.Errorf("semantic search by stored vectors: %v, want %s", got, short)
	}
}
