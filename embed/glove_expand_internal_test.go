package embed

import (
	"slices"
	"sync"
	"testing"
)

// Glove's expansion of a word is the built-in embedder's relatives and
// the word's nearest GloVe neighbours; the relatives' list is the
// built-in embedder's cached one, shared by every search, and stays as it
// was however many searches expand the word at once (they once appended
// the neighbours into it: a data race, and a cache changed under its
// other readers).
func TestGloveExpandLeavesTheSharedListAlone(t *testing.T) {
	g, err := NewGlove()
	if err != nil {
		t.Fatal(err)
	}
	const n = 8
	relatives := slices.Clone(g.wn.Expand("invoice", n))
	want := g.Expand("invoice", n)
	if len(want) != n || want[0] != "invoice" || slices.Equal(want, relatives) {
		t.Fatalf("the expansion of invoice: %v; want %d words, invoice first, with neighbours beside the relatives %v", want, n, relatives)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				if got := g.Expand("invoice", n); !slices.Equal(got, want) {
					t.Errorf("the expansion changed: %v, then %v", want, got)
					return
				}
			}
		})
	}
	wg.Wait()
	if got := g.wn.Expand("invoice", n); !slices.Equal(got, relatives) {
		t.Fatalf("the built-in embedder's cached expansion was %v, and is %v after Glove's", relatives, got)
	}
}
