package embed

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// A long text's form (past formLinear words, where it keeps a set of
// them) scores as the text, and holds each word once.
func TestGloveFormOfALongText(t *testing.T) {
	g, err := loadWordVectors()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 20 {
		var words []string
		for range 50 + rng.IntN(600) {
			switch rng.IntN(4) {
			case 0:
				words = append(words, fmt.Sprintf("ACCT-%d", rng.IntN(300)))
			case 1:
				words = append(words, fmt.Sprintf("zq%dx", rng.IntN(300)))
			default:
				words = append(words, g.words[rng.IntN(5000)])
			}
		}
		text := strings.Join(words, " ")
		f := g.form("payee", text)
		distinct := map[string]bool{}
		f.eachWord(f.oov, func(w string) {
			if distinct[w] {
				t.Fatalf("round %d: %q twice in the form", round, w)
			}
			distinct[w] = true
		})
		for _, q := range []string{"payee account", words[0] + " " + words[len(words)-1], "ACCT-17 zq5x river"} {
			a, b := g.scorer(q, defaultWordParams), g.scorer(q, defaultWordParams)
			if x, y := a.score("payee", text), b.scoreForm(f); x != y {
				t.Fatalf("round %d, query %q: the text scores %v, its form %v", round, q, x, y)
			}
		}
	}
}
