package httpapi

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/custody-mem/custody"
	"github.com/custody-mem/custody/embed"
)

// downEmbedder is an embedder that always fails.
type downEmbedder struct{ embed.Embedder }

func (downEmbedder) Embed(context.Context, []string) ([][]float32, error) {
	return nil, errors.New("dial tcp 127.0.0.1:11434: connection refused")
}

// TestSearchModes: POST /v1/search takes mode; a paraphrase is found by
// semantic and hybrid search, not lexical; each item names the lists that
// found it and the answer the mode that ranked; an unknown mode is a 400
// naming the field. With the embedder down the search says it fell back
// to lexical, and writes succeed.
func TestSearchModes(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			emb, err := embed.NewBuiltin(0)
			if err != nil {
				t.Fatal(err)
			}
			st, _ := b.open(t)
			e := newEnvOn(t, st, nil, custody.Options{Embedder: emb})
			alice := e.principal("acme", "alice", []string{"user"})
			want(t, e.do(alice, "POST", "/v1/memories", MemoryRequest{Namespace: "prefs", Class: "fact", Body: "I like short answers", Channel: "user"}), http.StatusCreated, "")
			want(t, e.do(alice, "POST", "/v1/memories", MemoryRequest{Namespace: "notes", Class: "fact", Body: "the garden needs watering", Channel: "user"}), http.StatusCreated, "")
			if _, err := e.svc.EmbedPending(e.ctx); err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				mode, wantMode string
				found          bool
			}{{"lexical", "lexical", false}, {"semantic", "semantic", true}, {"hybrid", "hybrid", true}, {"", "hybrid", true}} {
				r := e.do(alice, "POST", "/v1/search", SearchRequest{Query: "brief replies", Mode: c.mode})
				want(t, r, http.StatusOK, "")
				m := r.json(t)
				its := items(t, r)
				if m["mode"] != c.wantMode || m["fallback"] != nil {
					t.Errorf("mode %q: answered mode %v, fallback %v; want %s", c.mode, m["mode"], m["fallback"], c.wantMode)
				}
				if got := len(its) > 0 && its[0]["body"] == "I like short answers"; got != c.found {
					t.Errorf("mode %q: %s; want found %v", c.mode, r, c.found)
				}
				if c.found && !slices.Equal(its[0]["lists"].([]any), []any{"semantic"}) {
					t.Errorf("mode %q: lists %v, want [semantic]", c.mode, its[0]["lists"])
				}
			}
			bad := e.do(alice, "POST", "/v1/search", SearchRequest{Query: "brief replies", Mode: "fuzzy"})
			want(t, bad, http.StatusBadRequest, "")
			if !strings.Contains(bad.String(), "mode") {
				t.Errorf("mode fuzzy: %s; want an error naming mode", bad)
			}

			down := newEnvOn(t, st, e.svc.ServerKey(), custody.Options{Embedder: downEmbedder{emb}})
			want(t, down.do(alice, "POST", "/v1/memories", MemoryRequest{Namespace: "prefs", Class: "fact", Body: "short answers in email too", Channel: "user"}), http.StatusCreated, "")
			r := down.do(alice, "POST", "/v1/search", SearchRequest{Query: "short answers"})
			want(t, r, http.StatusOK, "")
			m := r.json(t)
			if fb, _ := m["fallback"].(string); m["mode"] != "lexical" || !strings.HasPrefix(fb, "embedder unavailable: ") || !strings.Contains(fb, "connection refused") {
				t.Errorf("search with the embedder down: mode %v, fallback %v; want lexical and why", m["mode"], m["fallback"])
			}
			if its := items(t, r); len(its) != 2 || !slices.Equal(its[0]["lists"].([]any), []any{"lexical"}) {
				t.Errorf("search with the embedder down: %s; want both short-answer records by the lexical list", r)
			}
		})
	}
}
