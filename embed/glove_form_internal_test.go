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
				words = append(words, g.word(int32(rng.IntN(5000))))
			}
		}
		text := strings.Join(words, " ")
		f := g.form("payee", text)
		distinct := map[string]bool{}
		g.eachFormWord(f, func(w string, _ int32) {
			if distinct[w] {
				t.Fatalf("round %d: %q twice in the form", round, w)
			}
			distinct[w] = true
		})
		for _, q := range []string{"payee account", words[0] + " " + words[len(words)-1], "ACCT-17 zq5x river"} {
			a, b := g.scorer(q, defaultWordParams), g.scorer(q, defaultWordParams)
			y, ok := b.scoreForm(f)
			if x := a.score("payee", text); x != y || !ok {
				t.Fatalf("round %d, query %q: the text scores %v, its form %v", round, q, x, y)
			}
		}
	}
}

// A released scorer's memory of words is handed on clear: a query
// scored with it scores as with memory of its own.
func TestScorerMemoryHandedOnClear(t *testing.T) {
	g, err := loadWordVectors()
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"the payee account at the bank", "we went camping by the lake", "ACCT-7777 zq1x river boat"}
	first := g.scorer("bank account camping", defaultWordParams)
	for _, x := range texts {
		first.score("", x)
	}
	if len(first.touched) == 0 {
		t.Fatal("the first query remembered no word by its row")
	}
	first.release()
	m, _ := scorerMemory.Get().(*wordMemory)
	if m == nil {
		t.Skip("the pool dropped the memory (a collection ran)")
	}
	for row, v := range m.byRow {
		if v != 0 {
			t.Fatalf("row %d of the released memory holds %d", row, v)
		}
	}
	if len(m.memo) != 0 {
		t.Fatalf("the released memory keeps %d words the table lacks (they may view a store's kept texts)", len(m.memo))
	}
	scorerMemory.Put(m)
	again, fresh := g.scorer("lake boat river", defaultWordParams), g.scorer("lake boat river", defaultWordParams)
	fresh.byRow, fresh.sims, fresh.memo = make([]int32, g.Len()), nil, map[string]int32{}
	for _, x := range texts {
		if a, b := again.score("", x), fresh.score("", x); a != b {
			t.Fatalf("%q: %v with the memory handed on, %v with its own", x, a, b)
		}
	}
}
